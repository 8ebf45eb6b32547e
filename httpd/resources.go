package httpd

// registerResources registers every account resource route under prefix.
// The agent API and the owner API share them: the same paths, bodies and
// shapes, with the caller's own principal.
func (s *Server) registerResources(api routes, prefix string) {
	s.registerPortfolio(api, prefix)
	s.registerSpaces(api, prefix)
	s.registerBookmarks(api, prefix)
	s.registerSheets(api, prefix)
	s.registerMoves(api, prefix)
	s.registerHistory(api, prefix)
	s.registerEvents(api, prefix)
}
