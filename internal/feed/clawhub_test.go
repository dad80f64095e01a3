package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/skillserver/skillserver/internal/content"
	"github.com/skillserver/skillserver/internal/item"
)

// The fingerprint is the CLI's: lines path:sha256hex in collation order
// (which puts scripts/run.sh before SKILL.md, as JavaScript's
// localeCompare does, where byte order would not), joined with "\n",
// without the paths the CLI skips.
func TestClawHubFingerprint(t *testing.T) {
	d := func(s string) content.Digest { return content.Sum([]byte(s)) }
	hexOf := func(s string) string { return d(s).Hex() }
	files := []item.Resource{
		{Path: "SKILL.md", Digest: d("md")},
		{Path: "scripts/run.sh", Digest: d("sh")},
		{Path: ".hidden/x.txt", Digest: d("x")},
		{Path: "lib/node_modules/a.js", Digest: d("a")},
		{Path: "_notes.md", Digest: d("n")},
	}
	want := "_notes.md:" + hexOf("n") + "\nscripts/run.sh:" + hexOf("sh") + "\nSKILL.md:" + hexOf("md")
	sum := sha256.Sum256([]byte(want))
	if got := ClawHubFingerprint(files); got != hex.EncodeToString(sum[:]) {
		t.Errorf("fingerprint %s, want the sha256 of\n%s", got, want)
	}
	if ClawHubFingerprint(files[:2]) == ClawHubFingerprint(files[:1]) {
		t.Error("a file more does not change the fingerprint")
	}
}

// Resolve finds the version whose files have the fingerprint, among all
// of a skill's versions; a scoped view knows no other skill.
func TestClawHubResolve(t *testing.T) {
	f := scanTree(t, Tree{SkillsDir: "../../testdata/skills"})
	sk, _ := f.Skill("k8s-deploy")
	old, _ := sk.Version("1.0.0")
	doc, ok := f.ClawHubResolve("k8s-deploy", ClawHubFingerprint(old.Files()))
	r := doc.(clawResolve)
	if !ok || r.Match == nil || r.Match.Version != "1.0.0" || r.LatestVersion.Version != "1.2.0" {
		t.Fatalf("resolve 1.0.0's files: %+v %v", r, ok)
	}
	doc, _ = f.ClawHubResolve("k8s-deploy", "nothing")
	if doc.(clawResolve).Match != nil {
		t.Error("an unknown fingerprint matched")
	}
	v := f.View("one", "", func(n string) bool { return n == "code-review" })
	if _, ok := v.ClawHubSkill("k8s-deploy"); ok {
		t.Error("a scoped view shows another skill")
	}
	if _, ok := v.ClawHubResolve("k8s-deploy", ""); ok {
		t.Error("a scoped view resolves another skill")
	}
	if got := v.ClawHubSearch("", 0).(clawSearch); len(got.Results) != 1 {
		t.Errorf("a scoped search finds %d skills", len(got.Results))
	}
}
