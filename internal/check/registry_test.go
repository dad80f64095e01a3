package check

import (
	"strings"
	"testing"
)

// Each rule an agent registry adds to the A2A schema is found, and a
// card that keeps them has none.
func TestRegistryProblems(t *testing.T) {
	good := `{"name":"skillserver","description":"d","url":"https://skills.example.com/","version":"0.0.0-dev",
		"skills":[{"id":"code_review","name":"Code Review","description":"d","tags":[]}]}`
	if got := registryProblems([]byte(good)); len(got) != 0 {
		t.Errorf("a good card: %q", got)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"version":"0.0.0-dev"`, `"version":"dev"`, `version "dev" is not semver`},
		{`"version":"0.0.0-dev"`, `"version":"v1.2.0"`, `version "v1.2.0" is not semver`},
		{`"url":"https://skills.example.com/"`, `"url":"/"`, `url "/" is not an absolute`},
		{`"url":"https://skills.example.com/"`, `"url":"ftp://x/"`, `url "ftp://x/"`},
		{`"tags":[]`, `"tags":null`, `skills[0] ("code_review") needs`},
		{`,"tags":[]`, ``, `skills[0] ("code_review") needs`},
		{`"tags":[]`, `"tags":[1]`, `skills[0]`},
		{`"id":"code_review"`, `"id":" "`, `skills[0] (" ") needs`},
		{`"description":"d","tags"`, `"description":"","tags"`, `skills[0]`},
		{`"name":"skillserver"`, `"name":""`, `name and description must not be empty`},
	} {
		card := strings.Replace(good, c.from, c.to, 1)
		got := registryProblems([]byte(card))
		if len(got) != 1 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s -> %s: %q, want one problem with %q", c.from, c.to, got, c.want)
		}
	}
}
