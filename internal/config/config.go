// Package config loads skillserver's configuration: flag > environment
// (SKILLSERVER_*) > YAML file > default. It is the only importer of viper
// and must not import other internal packages.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// EnvPrefix prefixes every environment variable.
const EnvPrefix = "SKILLSERVER_"

// Config is the validated configuration of every command.
type Config struct {
	Listen string `mapstructure:"listen"`
	Skills string `mapstructure:"skills"`
	// StateDir is state_dir: StateDirAuto, "" (memory) or a folder.
	StateDir string `mapstructure:"state_dir"`
	// BlobCacheBytes is blob_cache_max_bytes.
	BlobCacheBytes int64  `mapstructure:"blob_cache_max_bytes"`
	Agents         string `mapstructure:"agents"`
	// SkillsExplicit and AgentsExplicit are true when the directory was
	// configured rather than defaulted: a missing explicit directory is an
	// error, a missing default one means "no items of that kind".
	SkillsExplicit bool `mapstructure:"-"`
	AgentsExplicit bool `mapstructure:"-"`

	BaseURL         string        `mapstructure:"base_url"`
	TrustProxy      bool          `mapstructure:"trust_proxy"`
	AllowedHosts    []string      `mapstructure:"allowed_hosts"`
	DocCacheBytes   int64         `mapstructure:"document_cache_max_bytes"`
	CORSAllowOrigin string        `mapstructure:"cors_allow_origin"`
	LogFormat       string        `mapstructure:"log_format"`
	LogLevel        string        `mapstructure:"log_level"`
	LogBufferBytes  int           `mapstructure:"log_buffer_bytes"`
	MaxFileBytes    int64         `mapstructure:"max_file_bytes"`
	MaxFiles        int           `mapstructure:"max_files"`
	MaxTotalBytes   int64         `mapstructure:"max_total_bytes"`
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	ShutdownDelay   time.Duration `mapstructure:"shutdown_delay"`
	PageSize        int           `mapstructure:"page_size"`
	CataloguePage   int           `mapstructure:"catalogue_page_size"`
	CatalogueView   int           `mapstructure:"catalogue_view_max_bytes"`
	MetricsListen   string        `mapstructure:"metrics_listen"`
	MetricsPprof    bool          `mapstructure:"metrics_pprof"`
	ServerName      string        `mapstructure:"server_name"`
	ServerDesc      string        `mapstructure:"server_description"`
	ServerLogo      string        `mapstructure:"server_logo"`
	CatalogPub      string        `mapstructure:"catalog_publisher"`
	Watch           bool          `mapstructure:"watch"`
	Provenance      bool          `mapstructure:"provenance"`
	WatchDebounce   time.Duration `mapstructure:"watch_debounce"`
	WatchMaxWait    time.Duration `mapstructure:"watch_max_wait"`
	ReloadTimeout   time.Duration `mapstructure:"reload_timeout"`
	ReloadAbandoned int           `mapstructure:"reload_max_abandoned"`
	RescanInterval  time.Duration `mapstructure:"rescan_interval"`
	AdminToken      string        `mapstructure:"admin_token"`
	ReadTokensFile  string        `mapstructure:"read_tokens_file"`
	AuthFailures    int           `mapstructure:"auth_failures_per_minute"`
	Retention       time.Duration `mapstructure:"retention"`
	RetentionBytes  int64         `mapstructure:"retention_max_bytes"`
	MaxConnections  int           `mapstructure:"max_connections"`
	ReadHeaderTO    time.Duration `mapstructure:"read_header_timeout"`
	ReadBodyTO      time.Duration `mapstructure:"read_body_timeout"`
	IdleTimeout     time.Duration `mapstructure:"idle_timeout"`
	WriteStallTO    time.Duration `mapstructure:"write_stall_timeout"`
	MaxHeaderBytes  int           `mapstructure:"max_header_bytes"`
	MaxRanges       int           `mapstructure:"max_ranges"`

	// Bounds on what clients send and what scans hold open.
	MaxFolderDepth   int `mapstructure:"max_folder_depth"`
	MetricsMaxConns  int `mapstructure:"metrics_max_connections"`
	MaxSearchResults int `mapstructure:"max_search_results"`
	MaxUpdateChecks  int `mapstructure:"max_update_checks"`
	MaxBodyBytes     int `mapstructure:"max_body_bytes"`
	MaxQueryBytes    int `mapstructure:"max_query_bytes"`

	// The MCP endpoint's pages and bounds.
	MCPPageSize     int   `mapstructure:"mcp_page_size"`
	MCPMaxRequest   int64 `mapstructure:"mcp_max_request_bytes"`
	MCPMaxBatch     int   `mapstructure:"mcp_max_batch"`
	MCPMaxFileBytes int64 `mapstructure:"mcp_max_file_bytes"`

	// export: where it goes, the live server its documents may link, and
	// how long what no document names is kept.
	ExportOut   string        `mapstructure:"export_out"`
	ExportAPI   string        `mapstructure:"export_api_url"`
	ExportPrune time.Duration `mapstructure:"export_prune_older_than"`
	ExportPages bool          `mapstructure:"export_catalogue"`

	// Front matter limits, per SKILL.md or agent-md file.
	MaxFrontmatterBytes int `mapstructure:"max_frontmatter_bytes"`
	MaxFrontmatterKeys  int `mapstructure:"max_frontmatter_keys"`
	MaxListItems        int `mapstructure:"max_list_items"`
	MaxValueChars       int `mapstructure:"max_value_chars"`
	MaxTagChars         int `mapstructure:"max_tag_chars"`
	MaxFrontmatterDepth int `mapstructure:"max_frontmatter_depth"`
	MaxValueProblems    int `mapstructure:"max_value_problems"`

	// ConfigFile is the file that was read, or "".
	ConfigFile string `mapstructure:"-"`
}

// baseURL checks the value of a base URL key: "" (unset), or an absolute
// http or https URL without query, fragment or user info.
func baseURL(key, raw, example string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", key, err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("%s %q: must be an absolute http or https URL such as %s", key, raw, example)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return fmt.Errorf("%s %q: must not carry a query, fragment or user info", key, raw)
	}
	return nil
}

var serverNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// publisherRE is what an urn:air identifier's publisher may be (ARD's
// schema): a domain name, no port.
var publisherRE = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$`)

// allowedHostRE is the shape of an allowed_hosts entry: a DNS name or an
// IP literal, with an optional port.
var allowedHostRE = regexp.MustCompile(`^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?)(:[0-9]{1,5})?$`)

// ErrUsage marks errors in how the command was invoked (exit code 2).
var ErrUsage = errors.New("usage error")

// AddFlags registers the flags named in keys on fs, plus --config.
func AddFlags(fs *pflag.FlagSet, names ...string) {
	fs.String("config", "", "YAML configuration file (env "+EnvPrefix+"CONFIG)")
	for _, k := range Keys {
		if k.Flag == "" || !slices.Contains(names, k.Name) {
			continue
		}
		help := k.Help
		if z := k.Zero(); z != "" {
			help += "; 0: " + z
		}
		help += " (env " + k.Env() + ")"
		switch d := k.Default.(type) {
		case string:
			fs.String(k.Flag, d, help)
		case bool:
			fs.Bool(k.Flag, d, help)
		case int:
			fs.Int(k.Flag, d, help)
		case int64:
			fs.Int64(k.Flag, d, help)
		case time.Duration:
			fs.Duration(k.Flag, d, help)
		case []string:
			fs.StringSlice(k.Flag, d, help)
		}
	}
}

// Load builds the configuration from the parsed flag set fs (made by
// AddFlags), the environment and the config file. viper does the work:
// the flags are bound to their keys, precedence is viper's (flag >
// environment > file > default), and the decode into Config is strict, so
// a key the file misspells is refused.
//
// getenv nil is the process environment, read by viper (SetEnvPrefix
// and AutomaticEnv). A function is an injected environment, so tests that
// run the program in-process stay independent of the process's: viper
// takes it as the layer above the file and below the flags. Either way an
// empty variable counts as unset.
func Load(fs *pflag.FlagSet, getenv func(string) string) (*Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	for _, k := range Keys {
		if f := fs.Lookup(k.Flag); k.Flag != "" && f != nil {
			if err := v.BindPFlag(k.Name, f); err != nil {
				return nil, err
			}
		}
	}
	var env map[string]any
	if getenv == nil {
		v.SetEnvPrefix(strings.TrimSuffix(EnvPrefix, "_"))
		v.AutomaticEnv()
	} else {
		env = injectedEnv(getenv)
	}

	file := configFile(fs, v, env)
	if file != "" {
		if err := mergeFile(v, file); err != nil {
			return nil, err
		}
	}
	if env != nil {
		if err := v.MergeConfigMap(env); err != nil {
			return nil, err
		}
	}
	// Before the defaults go in, IsSet says whether a flag, the
	// environment or the file named the directory.
	skillsSet, agentsSet := v.IsSet("skills"), v.IsSet("agents")
	for _, k := range Keys {
		v.SetDefault(k.Name, k.Default)
	}

	var c Config
	if err := v.UnmarshalExact(&c); err != nil {
		return nil, decodeError(err, file)
	}
	c.ConfigFile = file
	c.SkillsExplicit, c.AgentsExplicit = skillsSet, agentsSet
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	return &c, nil
}

// configFileEnv names the config file in the environment; it is not a key.
const configFileEnv = "config"

// injectedEnv is the configuration an injected environment sets, by key,
// plus the config file under configFileEnv.
func injectedEnv(getenv func(string) string) map[string]any {
	env := map[string]any{}
	for _, k := range append(slices.Clip(Keys), Key{Name: configFileEnv}) {
		if val := getenv(k.Env()); val != "" {
			env[k.Name] = val
		}
	}
	return env
}

// configFile is --config, else SKILLSERVER_CONFIG.
func configFile(fs *pflag.FlagSet, v *viper.Viper, env map[string]any) string {
	if f := fs.Lookup("config"); f != nil && f.Changed {
		return f.Value.String()
	}
	if env != nil {
		s, _ := env[configFileEnv].(string)
		delete(env, configFileEnv)
		return s
	}
	return v.GetString(configFileEnv)
}

// mergeFile reads a YAML config file into v's file layer.
func mergeFile(v *viper.Viper, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("%w: config file: %w", ErrUsage, err)
	}
	defer f.Close()
	if err := v.MergeConfig(f); err != nil {
		return fmt.Errorf("%w: config file %s: %w", ErrUsage, file, err)
	}
	return nil
}

// decodeError words the strict decode's errors: keys no field takes can
// only come from the file; the rest are values of the wrong type.
func decodeError(err error, file string) error {
	var de *mapstructure.DecodeError
	if errors.As(err, &de) && de.Name() == "" {
		return fmt.Errorf("%w: config file %s: %w (docs/configuration.md lists the keys)", ErrUsage, file, de.Unwrap())
	}
	return fmt.Errorf("%w: %w", ErrUsage, err)
}

func (c *Config) validate() error {
	var errs []error
	if c.Listen == "" {
		errs = append(errs, errors.New("listen: must not be empty (e.g. :8080)"))
	}
	if c.Skills == "" {
		errs = append(errs, errors.New("skills: must not be empty"))
	}
	if c.Agents == "" {
		errs = append(errs, errors.New("agents: must not be empty"))
	}
	for _, b := range []struct {
		key, example string
		v            *string
	}{
		{"base_url", "https://skills.example.com", &c.BaseURL},
		{"export_api_url", "https://api.skills.example.com", &c.ExportAPI},
	} {
		if err := baseURL(b.key, *b.v, b.example); err != nil {
			errs = append(errs, err)
		}
		*b.v = strings.TrimRight(*b.v, "/")
	}
	for i, h := range c.AllowedHosts {
		if m := allowedHostRE.FindStringSubmatch(h); m == nil || m[3] != "" && mustAtoi(m[3][1:]) > 65535 {
			errs = append(errs, fmt.Errorf("allowed_hosts %q: must be a host name or IP literal with an optional port, as in Host (e.g. skills.example.com or 10.0.0.5:8080), no scheme or path", h))
		}
		c.AllowedHosts[i] = strings.ToLower(h)
	}
	if !slices.Contains([]string{"auto", "json", "text"}, c.LogFormat) {
		errs = append(errs, fmt.Errorf("log_format %q: must be auto, json or text", c.LogFormat))
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		errs = append(errs, fmt.Errorf("log_level %q: must be debug, info, warn or error", c.LogLevel))
	}
	errs = append(errs, c.numberErrors()...)
	if !serverNameRE.MatchString(c.ServerName) || len(c.ServerName) > 64 {
		errs = append(errs, fmt.Errorf("server_name %q: must be lower-hyphen-case, 1-64 characters (e.g. team-skills)", c.ServerName))
	}
	if c.CatalogPub != "" && !publisherRE.MatchString(c.CatalogPub) {
		errs = append(errs, fmt.Errorf("catalog_publisher %q: must be a domain name of letters, digits, dots and hyphens, without a port (e.g. skills.example.com)", c.CatalogPub))
	}
	if ext := strings.ToLower(filepath.Ext(c.ServerLogo)); c.ServerLogo != "" && ext != ".svg" && ext != ".png" {
		errs = append(errs, fmt.Errorf("server_logo %q: must be an .svg or .png file", c.ServerLogo))
	}
	if strings.TrimSpace(c.ServerDesc) == "" {
		errs = append(errs, errors.New("server_description: must not be empty"))
	}
	if c.WatchMaxWait < c.WatchDebounce {
		errs = append(errs, fmt.Errorf("watch_max_wait %s: must be at least watch_debounce (%s)", c.WatchMaxWait, c.WatchDebounce))
	}
	if c.AdminToken != "" && len(c.AdminToken) < minAdminToken {
		errs = append(errs, fmt.Errorf("admin_token: shorter than %d characters, which can be guessed; make one with `openssl rand -hex 24`", minAdminToken))
	}
	if c.MetricsPprof && c.MetricsListen == "" {
		errs = append(errs, errors.New("metrics_pprof needs metrics_listen: profiles are served only on the separate metrics listener, never on the main one; set metrics_listen (for example 127.0.0.1:9090)"))
	}
	return errors.Join(errs...)
}

// numberErrors checks every number and duration key against its Min
// (nil: 0, which is off).
func (c *Config) numberErrors() []error {
	fields := map[string]reflect.Value{}
	rv := reflect.ValueOf(c).Elem()
	for i := range rv.NumField() {
		if tag := rv.Type().Field(i).Tag.Get("mapstructure"); tag != "" && tag != "-" {
			fields[tag] = rv.Field(i)
		}
	}
	var errs []error
	for _, k := range Keys {
		f, ok := fields[k.Name]
		if !ok || k.Zero() == "" {
			continue
		}
		min := int64(0)
		if k.Min != nil {
			min = reflect.ValueOf(k.Min).Int()
		}
		if v := f.Int(); v < min {
			shown := fmt.Sprint(f.Interface())
			switch {
			case k.Min != nil:
				errs = append(errs, fmt.Errorf("%s %s: must be at least %v (%s)", k.Name, shown, k.Min, k.MinWhy))
			default:
				errs = append(errs, fmt.Errorf("%s %s: must not be negative (0 is off)", k.Name, shown))
			}
		}
	}
	return errs
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ExportNames are the keys only export reads.
var ExportNames = []string{"export_out", "export_api_url", "export_catalogue", "export_prune_older_than"}

// ServeNames lists the keys serve reads: every key but export's.
func ServeNames() []string {
	return slices.DeleteFunc(Names(), func(n string) bool { return slices.Contains(ExportNames, n) })
}

// Default is the default of the key named name, for code that needs the
// configuration's default without a configuration (tests of the packages
// whose options it sets). A name Keys does not hold, or another type,
// panics: a mistake in the caller.
func Default[T any](name string) T {
	for _, k := range Keys {
		if k.Name == name {
			return k.Default.(T)
		}
	}
	panic("config: no key " + name)
}

// Names lists every key name, in Keys order.
func Names() []string {
	out := make([]string, len(Keys))
	for i, k := range Keys {
		out[i] = k.Name
	}
	return out
}
