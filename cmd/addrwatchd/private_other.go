//go:build !unix

package main

// makeFilesPrivate has no umask to set on this platform; persistence
// still makes the data dir and every snapshot private.
func makeFilesPrivate() {}
