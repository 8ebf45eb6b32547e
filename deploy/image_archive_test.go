package deploy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// imageFile is what the test asks of one entry of an image's layers.
type imageFile struct {
	Mode     fs.FileMode // permission bits
	UID, GID int
	Dir      bool
	Regular  bool
	Link     string // the target of a symbolic or hard link
	Static   bool   // an ELF executable with no program interpreter
	PEMCerts bool   // holds at least one PEM certificate
	// BuildPath: the file holds the path of the tree it was built from,
	// which -trimpath leaves out of a release build.
	BuildPath bool
}

// readImageArchive reads an image saved by podman save --format
// oci-archive: the index names the manifest, the manifest the layers in
// order. It returns every path the layers hold (a later layer's entry
// wins) and a listing of each layer, as ls -l would show it. buildPath is
// the tree the binaries were built from.
func readImageArchive(path, buildPath string) (map[string]imageFile, string, error) {
	blobs, err := readOuterTar(path)
	if err != nil {
		return nil, "", err
	}
	var index struct{ Manifests []struct{ Digest string } }
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		return nil, "", fmt.Errorf("index.json names %d manifests, not one: %v", len(index.Manifests), err)
	}
	var manifest struct {
		Layers []struct {
			Digest    string
			MediaType string
			Size      int64
		}
	}
	if err := json.Unmarshal(blobs[blobPath(index.Manifests[0].Digest)], &manifest); err != nil {
		return nil, "", fmt.Errorf("the manifest: %w", err)
	}
	files := map[string]imageFile{}
	var listing strings.Builder
	for i, layer := range manifest.Layers {
		blob, ok := blobs[blobPath(layer.Digest)]
		if !ok {
			return nil, "", fmt.Errorf("layer %s is not in the archive", layer.Digest)
		}
		fmt.Fprintf(&listing, "layer %d of %d, %s (%s, %d bytes):\n", i+1, len(manifest.Layers), layer.Digest, layer.MediaType, layer.Size)
		if err := readLayer(blob, buildPath, files, &listing); err != nil {
			return nil, "", fmt.Errorf("layer %s: %w", layer.Digest, err)
		}
	}
	return files, listing.String(), nil
}

func blobPath(digest string) string { return "blobs/" + strings.Replace(digest, ":", "/", 1) }

// readOuterTar returns every file of the archive by its path; an image of
// two static binaries is a few tens of megabytes.
func readOuterTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]byte{}
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(h.Name, "./")] = b
	}
}

// readLayer adds a layer's entries to files and lists them.
func readLayer(blob []byte, buildPath string, files map[string]imageFile, listing io.Writer) error {
	var raw io.Reader = bytes.NewReader(blob)
	if len(blob) > 2 && blob[0] == 0x1f && blob[1] == 0x8b { // gzip's magic
		z, err := gzip.NewReader(raw)
		if err != nil {
			return err
		}
		raw = z
	}
	r := tar.NewReader(bufio.NewReader(raw))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.Trim(strings.TrimPrefix(h.Name, "./"), "/")
		info := h.FileInfo()
		fmt.Fprintf(listing, "  %s %5d:%-5d %10d /%s", info.Mode(), h.Uid, h.Gid, h.Size, name)
		if h.Linkname != "" {
			fmt.Fprintf(listing, " -> %s", h.Linkname)
		}
		fmt.Fprintln(listing)
		f := imageFile{Mode: info.Mode().Perm(), UID: h.Uid, GID: h.Gid, Dir: h.Typeflag == tar.TypeDir,
			Regular: h.Typeflag == tar.TypeReg, Link: h.Linkname}
		if f.Regular {
			body, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			f.Static = isStaticELF(body)
			f.PEMCerts = bytes.Contains(body, []byte("-----BEGIN CERTIFICATE-----"))
			f.BuildPath = bytes.Contains(body, []byte(buildPath))
		}
		files[name] = f
	}
}

// isStaticELF says whether b is an ELF executable that needs no dynamic
// loader: it has no PT_INTERP program header.
func isStaticELF(b []byte) bool {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return f.Type == elf.ET_EXEC || f.Type == elf.ET_DYN
}
