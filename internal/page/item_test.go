package page

import (
	"encoding/json"
	"testing"
)

func TestNewSourceLink(t *testing.T) {
	const commit = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name, repo, commit, folder, href string
	}{
		{"github", "https://github.com/team/skills.git", commit, "skills/k8s deploy", "https://github.com/team/skills/tree/" + commit + "/skills/k8s%20deploy"},
		{"gitlab", "https://gitlab.com/team/skills", commit, "skills/k8s-deploy", "https://gitlab.com/team/skills/-/tree/" + commit + "/skills/k8s-deploy"},
		{"codeberg", "https://codeberg.org/team/skills", commit, "k8s-deploy", "https://codeberg.org/team/skills/src/commit/" + commit + "/k8s-deploy"},
		{"unknown forge: no link", "https://git.example.com/team/skills", commit, "k8s-deploy", ""},
		{"ssh remote: no link", "git@github.com:team/skills.git", commit, "k8s-deploy", ""},
		{"plain http: no link", "http://github.com/team/skills", commit, "k8s-deploy", ""},
		{"javascript: no link", "javascript:alert(1)//github.com/x", commit, "k8s-deploy", ""},
		{"no commit: no link", "https://github.com/team/skills", "", "k8s-deploy", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newSourceLink(tc.repo, tc.commit, tc.folder)
			if l.Href != tc.href || l.Repository != tc.repo || len(l.Short) > 12 {
				t.Errorf("link %+v, want href %q", l, tc.href)
			}
		})
	}
}

func TestFrontmatterString(t *testing.T) {
	fm := json.RawMessage(`{"name":"x","license":" Apache-2.0 ","compatibility":["a"],"metadata":{"license":"MIT"}}`)
	for key, want := range map[string]string{"license": "Apache-2.0", "compatibility": "", "metadata": "", "absent": ""} {
		if got := frontmatterString(fm, key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if got := frontmatterString(nil, "license"); got != "" {
		t.Errorf("no front matter: %q", got)
	}
}
