package search

import (
	"slices"
	"testing"
)

// fixture exercises each ranking rule: the exact name "deploy" beats the
// prefix names "deploy-*", which beat skills that only mention deploying.
var fixture = []Doc{
	{Name: "release-notes", Description: "Draft release notes from merged pull requests."},
	{Name: "deploy-preview", Description: "Spin up a preview environment."},
	{Name: "k8s-rollout", Description: "Roll out services to Kubernetes; use when deploying to a cluster.", Tags: []string{"kubernetes"}},
	{Name: "deploy", Description: "Ship a build."},
	{Name: "deploy-docs", Description: "Publish documentation."},
	{Name: "code-review", Description: "Review code for bugs.", Tags: []string{"quality", "review"}},
	{Name: "cluster-audit", Description: "Audit a cluster. Deploys nothing; deployment reviews only.", Tags: []string{"security"}},
}

func names(ix *Index, q string) []string {
	var out []string
	for _, i := range ix.Search(q) {
		out = append(out, fixture[i].Name)
	}
	return out
}

func TestRanking(t *testing.T) {
	ix := New(fixture)
	tests := []struct {
		name, q string
		want    []string // the first len(want) results, in order
		exclude []string
	}{
		{"exact beats prefix beats description", "deploy",
			[]string{"deploy", "deploy-docs", "deploy-preview"}, []string{"release-notes", "code-review"}},
		{"stemming: deploying matches deploy and deploys", "deploying",
			nil, []string{"release-notes"}},
		{"case-insensitive exact", "Code-Review", []string{"code-review"}, nil},
		{"prefix of a word", "kube", []string{"k8s-rollout"}, []string{"deploy"}},
		{"tag match", "quality", []string{"code-review"}, nil},
		{"no match", "zebra", nil, fixture2names()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := names(ix, tt.q)
			if len(got) < len(tt.want) || !slices.Equal(got[:len(tt.want)], tt.want) {
				t.Errorf("Search(%q) = %v, want it to start with %v", tt.q, got, tt.want)
			}
			for _, e := range tt.exclude {
				if slices.Contains(got, e) {
					t.Errorf("Search(%q) = %v, must not contain %s", tt.q, got, e)
				}
			}
		})
	}
	// Stemming: "deploying" reaches descriptions that say "deploying",
	// "deploys" and "deployment"'s stem differs, but "deploy" names match.
	got := names(ix, "deploying")
	for _, want := range []string{"k8s-rollout", "cluster-audit", "deploy"} {
		if !slices.Contains(got, want) {
			t.Errorf("Search(deploying) = %v, lacks %s", got, want)
		}
	}
}

func fixture2names() []string {
	var out []string
	for _, d := range fixture {
		out = append(out, d.Name)
	}
	return out
}

func TestEmptyQueryListsAllByName(t *testing.T) {
	got := names(New(fixture), "  ")
	want := slices.Sorted(slices.Values(fixture2names()))
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestTermsStem(t *testing.T) {
	if got := Terms("Deploying, deploys & DEPLOYED"); !slices.Equal(got, []string{"deploy", "deploy", "deploy"}) {
		t.Errorf("Terms = %v", got)
	}
}
