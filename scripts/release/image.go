package main

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// image rewrites the one image of the docker-archive in as out, tagged
// tag, without what differs between two builds of one commit: podman's
// docker-format config records the build container's ID and its host
// name, in config and in the legacy container_config, which the rewritten
// config leaves out (nothing reads it: Docker and podman run from
// config). The layers, the times (which --timestamp fixes) and every
// other field are carried over as they are.
func image(in, out, tag string) error {
	img, err := tarball.ImageFromPath(in, nil)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("read the config of %s: %w", in, err)
	}
	cf = cf.DeepCopy()
	cf.Container = ""
	cf.Config.Hostname = ""
	fixed, err := mutate.ConfigFile(img, cf)
	if err != nil {
		return err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("tag %q: %w", tag, err)
	}
	if err := tarball.WriteToFile(out, ref, fixed); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
