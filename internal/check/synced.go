package check

import (
	"github.com/skillserver/skillserver/internal/content"
)

// Synced is what a client recorded for one item after a pass.
type Synced struct {
	Version string
	Digest  string
	Files   map[string][]byte // skill: path -> bytes; agent: "agent.md"; nil in a check
	// Sums are the digests of Files, which a check keeps instead of the
	// bytes, so its memory does not grow with the catalogue.
	Sums map[string]content.Digest
}

func synced(version, digest string, files map[string][]byte, keep bool) Synced {
	s := Synced{Version: version, Digest: digest, Sums: make(map[string]content.Digest, len(files))}
	for p, b := range files {
		s.Sums[p] = content.Sum(b)
	}
	if keep {
		s.Files = files
	}
	return s
}
