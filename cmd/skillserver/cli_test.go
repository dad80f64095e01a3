package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Every way to misuse the command line exits 2 and says where the usage
// is; a failure once the command runs exits 1.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, tt := range []struct {
		name    string
		args    []string
		message string
	}{
		{"no command", nil, "a command is required"},
		{"unknown command", []string{"serves"}, `unknown command "serves"`},
		{"unknown flag", []string{"serve", "--listen-addr", ":1"}, "unknown flag: --listen-addr"},
		{"flag of another command", []string{"healthcheck", "--skills", "x"}, "unknown flag: --skills"},
		{"bad flag value", []string{"validate", "--max-files", "many"}, `invalid argument "many"`},
		{"unexpected argument", []string{"validate", "extra"}, `unknown command "extra"`},
		{"version takes no argument", []string{"version", "x"}, `unknown command "x"`},
		{"bad format", []string{"validate", "--format", "yaml"}, "must be text or json"},
		{"bad configuration", []string{"serve", "--log-level", "loud"}, "log_level"},
		{"completion needs a shell", []string{"completion"}, "accepts 1 arg"},
		{"completion of an unknown shell", []string{"completion", "ksh"}, `invalid argument "ksh"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(t, nil, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.message) || !strings.Contains(errOut, "--help' for usage") || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, out, errOut, tt.message)
			}
		})
	}
	if code, _, errOut := runCmd(t, nil, "healthcheck", "--url", "http://127.0.0.1:1/readyz"); code != exitFailure || strings.Contains(errOut, "for usage") {
		t.Errorf("a refused connection: exit %d, stderr %q; want 1 without the usage hint", code, errOut)
	}
}

func TestVersionFlagAndCommandAgree(t *testing.T) {
	_, cmdOut, _ := runCmd(t, nil, "version")
	code, flagOut, _ := runCmd(t, nil, "--version")
	if code != 0 || cmdOut != flagOut || !strings.HasPrefix(cmdOut, build().Version+"\n") {
		t.Errorf("version %q, --version %q (exit %d)", cmdOut, flagOut, code)
	}
}

// cobra's completion: the scripts for each shell, and the __complete
// answers they ask the binary for.
func TestCompletion(t *testing.T) {
	for shell, marker := range map[string]string{"bash": "__start_skillserver", "zsh": "#compdef skillserver", "fish": "complete -c skillserver"} {
		if code, out, errOut := runCmd(t, nil, "completion", shell); code != 0 || !strings.Contains(out, marker) {
			t.Errorf("completion %s: exit %d, %d bytes without %q; stderr %q", shell, code, len(out), marker, errOut)
		}
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"se"}, []string{"serve"}},
		{[]string{""}, []string{"completion", "healthcheck", "serve", "validate", "version"}},
		{[]string{"serve", "--base-"}, []string{"--base-url"}},
		{[]string{"validate", "--format", ""}, []string{"json", "text"}},
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	} {
		code, out, _ := runCmd(t, nil, append([]string{"__complete"}, tt.args...)...)
		got := completions(out)
		if code != 0 || !containsAll(got, tt.want) {
			t.Errorf("__complete %q: exit %d, %q; want %q among them", tt.args, code, got, tt.want)
		}
	}
}

// completions are the candidates of a __complete answer: one per line,
// tab then description, up to the ":directive" line.
func completions(out string) []string {
	var got []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, ":") {
			break
		}
		name, _, _ := strings.Cut(strings.TrimSpace(line), "\t")
		got = append(got, name)
	}
	return got
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// The bash script really completes: bash loads the bash-completion
// package (as an interactive shell does) and `skillserver completion bash`
// of a built binary, and runs the completion function on a command line,
// as pressing TAB does.
func TestBashCompletionInBash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed: ", err)
	}
	bin := filepath.Join(t.TempDir(), "skillserver")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tt := range []struct {
		line string
		want string
	}{
		{"skillserver val", "validate"},
		{"skillserver serve --read-tok", "--read-tokens-file"},
		{"skillserver completion z", "zsh"},
	} {
		script := `source /usr/share/bash-completion/bash_completion
source <("$BIN" completion bash)
COMP_LINE="$LINE"; COMP_POINT=${#COMP_LINE}
read -ra COMP_WORDS <<<"$COMP_LINE"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
__start_skillserver skillserver
printf '%s\n' "${COMPREPLY[@]}"`
		cmd := exec.CommandContext(t.Context(), bash, "--norc", "--noprofile", "-c", script)
		cmd.Env = []string{"PATH=" + filepath.Dir(bin) + ":/usr/bin:/bin", "BIN=" + bin, "LINE=" + tt.line}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != tt.want {
			t.Errorf("%q completes to %q (%v, stderr %q), want %q", tt.line, out, err, stderr.String(), tt.want)
		}
	}
}
