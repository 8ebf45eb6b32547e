//go:build unix

package main

import "syscall"

// makeFilesPrivate sets the process's umask so that every file and
// directory the server creates from now on, whoever creates it (raft's
// snapshot store, bolt, a temporary upload), is private to its user: the
// data dir holds password and key hashes. persistence also repairs the
// modes of an existing data dir at start, and tightens each snapshot once
// written, so the modes hold even where this cannot be set.
func makeFilesPrivate() { syscall.Umask(0o077) }
