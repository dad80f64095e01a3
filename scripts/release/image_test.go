package main

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// built writes, as a docker-archive, the image two builds of one commit
// make: the same layer and config but for the build container's ID and
// host name.
func built(t *testing.T, dir, container, hostname string, layer v1.Layer) string {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Container = container
	cf.Config.Hostname = hostname
	cf.Config.Entrypoint = []string{"/skillserver"}
	cf.Config.Healthcheck = &v1.HealthConfig{Test: []string{"CMD", "/skillserver", "healthcheck"}}
	cf.Config.Labels = map[string]string{"org.opencontainers.image.revision": "abc"}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, container+".tar")
	if err := tarball.WriteToFile(p, name.MustParseReference("localhost/x:built"), img); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImageRewriteMakesTwoBuildsOne(t *testing.T) {
	dir := t.TempDir()
	layer, err := random.Layer(1024, "application/vnd.docker.image.rootfs.diff.tar.gzip")
	if err != nil {
		t.Fatal(err)
	}
	var ids []v1.Hash
	for i, b := range []struct{ container, hostname string }{{"5d7fae9f7d7c", "50f17e5909bc"}, {"d6ebae709af8", "a0b624acddbf"}} {
		in := built(t, dir, b.container, b.hostname, layer)
		before, err := tarball.ImageFromPath(in, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, b.container+".same.tar")
		if err := image(in, out, "localhost/x:v1-amd64"); err != nil {
			t.Fatal(err)
		}
		got, err := tarball.ImageFromPath(out, nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := got.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		cf, err := got.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Container != "" || cf.Config.Hostname != "" {
			t.Errorf("build %d: container %q, hostname %q kept", i, cf.Container, cf.Config.Hostname)
		}
		if cf.Config.Healthcheck == nil || len(cf.Config.Healthcheck.Test) != 3 || cf.Config.Entrypoint[0] != "/skillserver" || cf.Config.Labels["org.opencontainers.image.revision"] != "abc" {
			t.Errorf("build %d: the rewrite lost part of the config: %+v", i, cf.Config)
		}
		wantLayers, _ := before.Layers()
		gotLayers, _ := got.Layers()
		if len(gotLayers) != len(wantLayers) {
			t.Fatalf("build %d: %d layers, want %d", i, len(gotLayers), len(wantLayers))
		}
		for j := range gotLayers {
			w, _ := wantLayers[j].Digest()
			g, _ := gotLayers[j].Digest()
			if w != g {
				t.Errorf("build %d layer %d: %s, want %s", i, j, g, w)
			}
		}
	}
	if ids[0] != ids[1] {
		t.Errorf("two builds are two images after the rewrite: %s and %s", ids[0], ids[1])
	}
}
