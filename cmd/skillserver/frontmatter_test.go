package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestValidateFrontmatterBomb: a SKILL.md under max_file_bytes whose front
// matter holds 4.9 million tags is a limit problem naming the key, and its
// valid neighbour is still published.
func TestValidateFrontmatterBomb(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "bomb", "SKILL.md"),
		"---\nname: bomb\ndescription: A front matter bomb.\nmetadata:\n  tags: [a"+strings.Repeat(",a", 4_900_000-1)+"]\n---\nBody\n")
	mustWrite(t, filepath.Join(skills, "good", "SKILL.md"), fixture.SkillDoc("good", ""))

	code, out, errOut := runCmd(t, nil, "validate", "--skills", skills)
	want := skills + "/bomb/SKILL.md: limit: front matter is longer than 65536 bytes (max_frontmatter_bytes)"
	if code != 1 || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 {
		t.Errorf("exit %d, stdout:\n%s\nwant one line starting %q", code, out, want)
	}
	if !strings.HasPrefix(errOut, "1 skills (1 versions)") {
		t.Errorf("stderr = %q, want the valid neighbour published", errOut)
	}
	// The limit is configurable: the flag reaches the parser.
	small := t.TempDir()
	mustWrite(t, filepath.Join(small, "good", "SKILL.md"), fixture.SkillDoc("good", ""))
	code, out, _ = runCmd(t, nil, "validate", "--skills", small, "--max-frontmatter-bytes", "40")
	if code != 1 || !strings.Contains(out, "longer than 40 bytes (max_frontmatter_bytes)") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

// TestValidateFieldCharacters: control characters and bidirectional
// controls in published front matter values are errors naming the field,
// the code point and its position; in a body or text resource they are
// warnings.
func TestValidateFieldCharacters(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "esc", "SKILL.md"), "---\nname: esc\ndescription: \"Looks \\e[31mred\"\n---\nBody\n")
	mustWrite(t, filepath.Join(skills, "bidi", "SKILL.md"), "---\nname: bidi\ndescription: d\nmetadata:\n  tags: [ok, \"ab\u202ecd\"]\n---\nBody\n")
	mustWrite(t, filepath.Join(skills, "body", "SKILL.md"), fixture.SkillDoc("body", "")+"access = \"user\u202e \u2066// admin\u2069\u2066\"\n")
	mustWrite(t, filepath.Join(skills, "body", "notes.md"), "zero\u200bwidth\n")
	code, out, _ := runCmd(t, nil, "validate", "--skills", skills)
	for _, want := range []string{
		skills + "/esc/SKILL.md: character: description holds U+001B (a control character) at character 7 (the value starts on line 3); remove it",
		skills + "/bidi/SKILL.md: character: metadata.tags[1] holds U+202E (a bidirectional control) at character 3",
		skills + "/body/SKILL.md: character: warning: holds 4 bidirectional or invisible characters, the first U+202E (a bidirectional control) at line 7, column 15",
		skills + "/body/notes.md: character: warning: holds 1 bidirectional or invisible characters, the first U+200B (an invisible character) at line 1, column 5",
	} {
		if !strings.Contains(out, want+"") {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d", code)
	}
}

// TestValidateEscapesPaths: a folder whose name holds a newline cannot
// forge a second problem line; JSON output keeps the path exact.
func TestValidateEscapesPaths(t *testing.T) {
	skills := t.TempDir()
	forged := "x\n" + filepath.Base(skills) + ": name: forged"
	mustWrite(t, filepath.Join(skills, forged, "SKILL.md"), fixture.SkillDoc("x", ""))
	code, out, _ := runCmd(t, nil, "validate", "--skills", skills)
	want := strconv.Quote(skills+"/"+forged) + ": name: "
	if code != 1 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, want) {
		t.Fatalf("exit %d, want one line starting %s, got:\n%s", code, want, out)
	}
	code, out, _ = runCmd(t, nil, "validate", "--skills", skills, "--format", "json")
	var problems []struct{ Path string }
	if err := json.Unmarshal([]byte(out), &problems); err != nil || code != 1 || len(problems) != 1 {
		t.Fatalf("exit %d, err %v, output:\n%s", code, err, out)
	}
	if problems[0].Path != skills+"/"+forged {
		t.Errorf("JSON path = %q", problems[0].Path)
	}
}

// TestValidateAlias: a YAML alias used as a value is reported as such,
// not as a missing value.
func TestValidateAlias(t *testing.T) {
	skills := t.TempDir()
	mustWrite(t, filepath.Join(skills, "alias", "SKILL.md"), "---\nname: alias\nx: &a Does things.\ndescription: *a\n---\nBody\n")
	code, out, _ := runCmd(t, nil, "validate", "--skills", skills)
	want := skills + "/alias/SKILL.md: frontmatter: YAML anchors and aliases (&name, *name, <<: *name) are not allowed in front matter (line 3); write the value out\n"
	if code != 1 || out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}
}
