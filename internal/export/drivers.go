package export

// optionalDriver is a bucket driver a build tag can leave out of the
// binary. Each one's package initialisation costs memory in every
// process, whatever the command (docs/operations.md, "Smaller builds").
type optionalDriver struct {
	tag    string // the build tag that leaves it out
	linked bool   // set by its drivers_*.go when it is built in
}

// optionalDrivers are keyed by URL scheme.
var optionalDrivers = map[string]*optionalDriver{
	"s3":     {tag: "no_s3blob"},
	"gs":     {tag: "no_gcsblob"},
	"azblob": {tag: "no_azureblob"},
}
