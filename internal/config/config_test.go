package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func load(t *testing.T, args []string, env map[string]string) (*Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	names := make([]string, 0, len(Keys))
	for _, k := range Keys {
		names = append(names, k.Name)
	}
	AddFlags(fs, names...)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return Load(fs, func(k string) string { return env[k] })
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "skillserver.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":8080" || c.Skills != "./skills" || c.Agents != "./agents" || c.SkillsExplicit || c.AgentsExplicit {
		t.Errorf("defaults = %+v", c)
	}
	if c.CORSAllowOrigin != "*" || c.ShutdownTimeout != 15*time.Second || c.MaxFiles != 1000 {
		t.Errorf("defaults = %+v", c)
	}
	if c.MaxFrontmatterBytes != 64<<10 || c.MaxFrontmatterKeys != 64 || c.MaxListItems != 64 || c.MaxValueChars != 1024 || c.MaxTagChars != 128 {
		t.Errorf("front matter limits = %+v", c)
	}
	// The bounds that were constants keep their values.
	if c.MaxFrontmatterDepth != 16 || c.MaxValueProblems != 10 || c.MaxFolderDepth != 64 || c.MetricsMaxConns != 16 ||
		c.MaxSearchResults != 100 || c.MaxUpdateChecks != 100 || c.MaxBodyBytes != 1<<20 || c.MaxQueryBytes != 1<<10 {
		t.Errorf("limits = %+v", c)
	}
}

// TestLimitSources: each limit that was a constant is set by its flag,
// its environment variable and the file, and 0 is refused where no
// bound is unsafe.
func TestLimitSources(t *testing.T) {
	file := writeConfig(t, "max_folder_depth: 5\nmax_update_checks: 0\nmax_search_results: 0\nmax_query_bytes: 0\n")
	c, err := load(t, []string{"--max-frontmatter-depth", "4", "--metrics-max-connections", "2"},
		map[string]string{"SKILLSERVER_CONFIG": file, "SKILLSERVER_MAX_VALUE_PROBLEMS": "3", "SKILLSERVER_MAX_BODY_BYTES": "4096"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxFrontmatterDepth != 4 || c.MetricsMaxConns != 2 || c.MaxValueProblems != 3 || c.MaxBodyBytes != 4096 ||
		c.MaxFolderDepth != 5 || c.MaxUpdateChecks != 0 || c.MaxSearchResults != 0 || c.MaxQueryBytes != 0 {
		t.Errorf("limits = %+v", c)
	}
	for _, tt := range []struct{ flag, message string }{
		{"--max-frontmatter-depth", "max_frontmatter_depth 0: must be at least 3"},
		{"--max-folder-depth", "max_folder_depth 0: must be at least 1"},
		{"--metrics-max-connections", "metrics_max_connections 0: must be at least 1"},
		{"--max-body-bytes", "max_body_bytes 0: must be at least 1"},
	} {
		_, err := load(t, []string{tt.flag, "0"}, nil)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.message) {
			t.Errorf("%s 0: error %v, want ErrUsage mentioning %q", tt.flag, err, tt.message)
		}
	}
	// Below the depth of metadata.tags' items, ordinary skills fail.
	if _, err := load(t, []string{"--max-frontmatter-depth", "2"}, nil); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "max_frontmatter_depth 2: must be at least 3") {
		t.Errorf("--max-frontmatter-depth 2: error %v, want ErrUsage asking for at least 3", err)
	}
	if c, err := load(t, []string{"--max-frontmatter-depth", "3"}, nil); err != nil || c.MaxFrontmatterDepth != 3 {
		t.Errorf("--max-frontmatter-depth 3: %v, %+v", err, c)
	}
	for _, flag := range []string{"--max-value-problems", "--max-search-results", "--max-update-checks", "--max-query-bytes"} {
		_, err := load(t, []string{flag, "-1"}, nil)
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_")) {
			t.Errorf("%s -1: error %v, want ErrUsage naming the key", flag, err)
		}
	}
}

func TestPrecedence(t *testing.T) {
	file := writeConfig(t, "listen: \":1\"\nskills: /from-file\nagents: /agents-file\nbase_url: https://file.test/\nmax_files: 7\n")
	env := map[string]string{"SKILLSERVER_CONFIG": file, "SKILLSERVER_LISTEN": ":2", "SKILLSERVER_SKILLS": "/from-env", "SKILLSERVER_TRUST_PROXY": "true"}
	c, err := load(t, []string{"--listen", ":3"}, env)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"flag beats env and file", c.Listen, ":3"},
		{"env beats file", c.Skills, "/from-env"},
		{"file beats default", c.Agents, "/agents-file"},
		{"file int", c.MaxFiles, 7},
		{"env bool", c.TrustProxy, true},
		{"trailing slash trimmed", c.BaseURL, "https://file.test"},
		{"explicit skills", c.SkillsExplicit, true},
		{"explicit agents from file", c.AgentsExplicit, true},
		{"config file recorded", c.ConfigFile, file},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: got %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestRejects(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		file    string
		message string
	}{
		{"unknown file key", nil, nil, "listen: \":1\"\nlisten_addr: x\n", `has invalid keys: listen_addr`},
		{"unknown nested key", nil, nil, "limits:\n  files: 1\n", `has invalid keys: limits`},
		{"bad yaml", nil, nil, "listen: [\n", "config file"},
		{"relative base url", []string{"--base-url", "skills.example.com"}, nil, "", "base_url"},
		{"base url with query", []string{"--base-url", "https://a.test/?x=1"}, nil, "", "base_url"},
		{"bad log level", nil, map[string]string{"SKILLSERVER_LOG_LEVEL": "loud"}, "", "log_level"},
		{"bad int env", nil, map[string]string{"SKILLSERVER_MAX_FILES": "many"}, "", "max_files"},
		{"negative limit", []string{"--max-files", "-1"}, nil, "", "max_files"},
		{"negative front matter limit", nil, map[string]string{"SKILLSERVER_MAX_TAG_CHARS": "-1"}, "", "max_tag_chars"},
		{"max wait under the debounce", []string{"--watch-debounce", "3s"}, nil, "", "watch_max_wait 2s: must be at least watch_debounce"},
		{"negative reload timeout", []string{"--reload-timeout", "-1s"}, nil, "", "reload_timeout"},
		{"empty catalogue page", []string{"--catalogue-page-size", "0"}, nil, "", "catalogue_page_size 0: must be at least 1"},
		{"allowed host with scheme", []string{"--allowed-hosts", "https://a.test"}, nil, "", "allowed_hosts"},
		{"allowed host with path", nil, map[string]string{"SKILLSERVER_ALLOWED_HOSTS": "a.test,b.test/x"}, "", `allowed_hosts "b.test/x"`},
		{"allowed host port out of range", nil, nil, "allowed_hosts: [\"a.test:99999\"]\n", "allowed_hosts"},
		{"negative document cache", []string{"--document-cache-max-bytes", "-1"}, nil, "", "document_cache_max_bytes"},
		{"missing file", nil, map[string]string{"SKILLSERVER_CONFIG": "/nonexistent/skillserver.yaml"}, "", "config file"},
		{"one-character admin token", nil, map[string]string{"SKILLSERVER_ADMIN_TOKEN": "x"}, "", "admin_token: shorter than 16 characters, which can be guessed; make one with `openssl rand -hex 24`"},
		{"15-character admin token in the file", nil, nil, "admin_token: abcdefghijklmno\n", "admin_token: shorter than 16 characters"},
		{"publisher with a port", []string{"--catalog-publisher", "skills.example.com:8080"}, nil, "", `catalog_publisher "skills.example.com:8080": must be a domain name`},
		{"publisher with an underscore", nil, map[string]string{"SKILLSERVER_CATALOG_PUBLISHER": "my_team.example"}, "", "catalog_publisher"},
		{"logo of another type", []string{"--server-logo", "logo.gif"}, nil, "", `server_logo "logo.gif": must be an .svg or .png file`},
		{"negative auth failures", []string{"--auth-failures-per-minute", "-1"}, nil, "", "auth_failures_per_minute -1: must not be negative (0 is off)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.env
			if tt.file != "" {
				env = map[string]string{"SKILLSERVER_CONFIG": writeConfig(t, tt.file)}
			}
			_, err := load(t, tt.args, env)
			if err == nil {
				t.Fatal("accepted")
			}
			if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q: want ErrUsage mentioning %q", err, tt.message)
			}
		})
	}
}

func TestAllowedHostsSources(t *testing.T) {
	want := []string{"skills.example.com", "10.0.0.5:8080", "[::1]:9"}
	for _, tt := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"flag", []string{"--allowed-hosts", "Skills.Example.com,10.0.0.5:8080", "--allowed-hosts", "[::1]:9"}, nil},
		{"env", nil, map[string]string{"SKILLSERVER_ALLOWED_HOSTS": "skills.example.com,10.0.0.5:8080,[::1]:9"}},
		{"file", nil, map[string]string{"SKILLSERVER_CONFIG": writeConfig(t, "allowed_hosts:\n  - skills.example.com\n  - 10.0.0.5:8080\n  - \"[::1]:9\"\n")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := load(t, tt.args, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.AllowedHosts, want) {
				t.Errorf("allowed_hosts = %q, want %q", c.AllowedHosts, want)
			}
		})
	}
	c, err := load(t, nil, nil)
	if err != nil || len(c.AllowedHosts) != 0 || c.DocCacheBytes != 32<<20 {
		t.Errorf("defaults: %v, %+v", err, c)
	}
}

// TestConfigurationDocIsCurrent keeps docs/configuration.md's key table
// equal to Keys; UPDATE_GOLDEN=1 rewrites it.
func TestConfigurationDocIsCurrent(t *testing.T) {
	const path = "../../docs/configuration.md"
	const begin, end = "<!-- BEGIN KEYS (generated from internal/config.Keys by `make golden`) -->\n", "<!-- END KEYS -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the generated-table markers", path)
	}
	want := s[:i+len(begin)] + MarkdownTable() + s[j:]
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if s != want {
		t.Errorf("%s is out of date with internal/config.Keys; run `make golden`", path)
	}
}

// pflag takes a back-quoted word in a flag's help as its type: the help
// showed "--page-size all" where "int" belonged.
func TestFlagHelpShowsTypes(t *testing.T) {
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	AddFlags(fs, Names()...)
	fs.VisitAll(func(f *pflag.Flag) {
		if name, _ := pflag.UnquoteUsage(f); strings.Contains(f.Usage, "`") {
			t.Errorf("--%s shows as %q in the help instead of its type: no back quotes in help texts", f.Name, name)
		}
	})
}

// With no injected environment viper reads the process's (SetEnvPrefix,
// AutomaticEnv), between the flags and the file, as main runs it.
func TestProcessEnvironment(t *testing.T) {
	file := writeConfig(t, "listen: \":1\"\nagents: /agents-file\nmax_files: 7\n")
	t.Setenv("SKILLSERVER_CONFIG", file)
	t.Setenv("SKILLSERVER_MAX_FILES", "9")
	t.Setenv("SKILLSERVER_SKILLS", "/from-env")
	t.Setenv("SKILLSERVER_ALLOWED_HOSTS", "a.test,b.test:8080")
	t.Setenv("SKILLSERVER_LOG_LEVEL", "")
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	AddFlags(fs, Names()...)
	if err := fs.Parse([]string{"--listen", ":3"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != ":3" || c.MaxFiles != 9 || c.Skills != "/from-env" || c.Agents != "/agents-file" || !c.SkillsExplicit || !c.AgentsExplicit ||
		c.ConfigFile != file || c.LogLevel != "info" || !slices.Equal(c.AllowedHosts, []string{"a.test", "b.test:8080"}) {
		t.Errorf("config = %+v", c)
	}
	t.Setenv("SKILLSERVER_MAX_FILES", "many")
	if _, err := Load(fs, nil); err == nil || !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "max_files") {
		t.Errorf("bad int in the environment: %v", err)
	}
}

// TestExampleFileIsCurrent keeps skillserver.example.yaml equal to Keys;
// UPDATE_GOLDEN=1 rewrites it.
func TestExampleFileIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", ExampleFile)
	want := ExampleYAML()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is out of date with internal/config.Keys; run `make golden`", ExampleFile)
	}
}

// TestExampleFileLoads: every key of the example, uncommented, loads and
// gives the defaults, so the file names every key with a value of its
// type and nothing the loader refuses.
func TestExampleFileLoads(t *testing.T) {
	var b strings.Builder
	n := 0
	for _, line := range strings.Split(ExampleYAML(), "\n") {
		if rest, ok := strings.CutPrefix(line, "#"); ok && !strings.HasPrefix(rest, " ") && rest != "" {
			b.WriteString(rest + "\n")
			n++
		}
	}
	if n != len(Keys) {
		t.Fatalf("the example has %d keys, Keys %d", n, len(Keys))
	}
	file := writeConfig(t, b.String())
	got, err := load(t, []string{"--config", file}, nil)
	if err != nil {
		t.Fatalf("the example, uncommented: %v", err)
	}
	want, err := load(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got.ConfigFile, want.ConfigFile = "", ""
	// Named in the file, the default roots count as configured; the
	// values are the same.
	got.SkillsExplicit, got.AgentsExplicit = want.SkillsExplicit, want.AgentsExplicit
	if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("the example, uncommented, loads\n%+v\nwant the defaults\n%+v", got, want)
	}
}

// TestZeroIsOff: 0 has one meaning in every number and duration key. A
// key without Min takes 0 (off) and refuses a negative value; a key with
// Min refuses 0 and what is below Min, naming the key, the bound and why.
func TestZeroIsOff(t *testing.T) {
	numbers := 0
	for _, k := range Keys {
		if k.Zero() == "" {
			if k.Min != nil {
				t.Errorf("%s: Min set on a key that is no number or duration", k.Name)
			}
			continue
		}
		numbers++
		t.Run(k.Name, func(t *testing.T) {
			if k.Min != nil && fmt.Sprintf("%T", k.Min) != fmt.Sprintf("%T", k.Default) {
				t.Fatalf("Min is a %T, the default a %T", k.Min, k.Default)
			}
			if k.Min != nil && k.MinWhy == "" {
				t.Error("Min without MinWhy")
			}
			file := func(v string) map[string]string {
				return map[string]string{"SKILLSERVER_CONFIG": writeConfig(t, k.Name+": "+v+"\n")}
			}
			_, err := load(t, nil, file("0"))
			switch {
			case k.Min == nil && err != nil:
				// watch_max_wait is also held to watch_debounce, which
				// has a Min; nothing else may refuse 0.
				t.Errorf("0 refused: %v", err)
			case k.Min != nil && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s 0", k.Name)) || !strings.Contains(err.Error(), fmt.Sprintf("at least %v", k.Min))):
				t.Errorf("0 for a key with Min %v: %v", k.Min, err)
			}
			if _, err := load(t, nil, file("-1")); err == nil || !strings.Contains(err.Error(), k.Name) {
				t.Errorf("-1 accepted or the error does not name the key: %v", err)
			}
		})
	}
	if numbers < 30 {
		t.Errorf("%d number and duration keys: Zero does not know their types", numbers)
	}
}
