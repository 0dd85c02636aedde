package deploycheck_test

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ociImage is what the tests read of an image saved in OCI layout: its
// configuration and its layers' files, in order.
type ociImage struct {
	Config struct {
		User         string         `json:"User"`
		Env          []string       `json:"Env"`
		Entrypoint   []string       `json:"Entrypoint"`
		Cmd          []string       `json:"Cmd"`
		WorkingDir   string         `json:"WorkingDir"`
		ExposedPorts map[string]any `json:"ExposedPorts"`
	} `json:"config"`
	layers []string
}

type ociDescriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
}

// readOCI reads the image saved by `podman image save --format oci-dir`
// into dir.
func readOCI(t *testing.T, dir string) ociImage {
	t.Helper()
	blob := func(d ociDescriptor) string {
		algo, hex, ok := strings.Cut(d.Digest, ":")
		if !ok {
			t.Fatalf("OCI descriptor with digest %q", d.Digest)
		}
		return filepath.Join(dir, "blobs", algo, hex)
	}
	decode := func(path string, v any) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var index struct{ Manifests []ociDescriptor }
	decode(filepath.Join(dir, "index.json"), &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("the saved image has %d manifests, want 1", len(index.Manifests))
	}
	var manifest struct {
		Config ociDescriptor
		Layers []ociDescriptor
	}
	decode(blob(index.Manifests[0]), &manifest)
	var img ociImage
	decode(blob(manifest.Config), &img)
	for _, l := range manifest.Layers {
		img.layers = append(img.layers, blob(l))
	}
	return img
}

// unpack lays out the image's layers under root, as a container runtime
// would: owners, modes and links kept, whiteouts applied.
func (img ociImage) unpack(t *testing.T, root string) {
	t.Helper()
	for _, layer := range img.layers {
		if err := unpackLayer(layer, root); err != nil {
			t.Fatalf("unpack layer %s: %v", filepath.Base(layer), err)
		}
	}
}

func unpackLayer(path, root string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	// A layer is a tar, gzipped or not; gzip starts with 0x1f 0x8b.
	if head, _ := r.(*bufio.Reader).Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean("/" + h.Name)
		target := filepath.Join(root, name)
		if base := filepath.Base(name); strings.HasPrefix(base, ".wh.") {
			if err := os.RemoveAll(filepath.Join(filepath.Dir(target), strings.TrimPrefix(base, ".wh."))); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := h.FileInfo().Mode().Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, mode); err != nil {
				return err
			}
		case tar.TypeReg:
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
			continue
		case tar.TypeLink:
			_ = os.Remove(target)
			if err := os.Link(filepath.Join(root, filepath.Clean("/"+h.Linkname)), target); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: tar entry type %c not expected in the image", h.Name, h.Typeflag)
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
			return err
		}
		if err := os.Chmod(target, h.FileInfo().Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky)); err != nil {
			return err
		}
	}
}
