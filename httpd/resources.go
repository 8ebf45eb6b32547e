package httpd

// registerResources registers every account resource route under prefix.
// The agent API and the owner API share them: the same paths, bodies and
// shapes, with the caller's own principal.
func (s *Server) registerResources(r routeAdder, prefix string, aud audience) {
	s.registerPortfolio(r, prefix, aud)
	s.registerSpaces(r, prefix, aud)
	s.registerBookmarks(r, prefix, aud)
	s.registerSheets(r, prefix, aud)
	s.registerMoves(r, prefix, aud)
	s.registerHistory(r, prefix, aud)
	s.registerEvents(r, prefix, aud)
}
