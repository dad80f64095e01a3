package export

// optionalDrivers are the bucket drivers a build tag can leave out of the
// binary, by URL scheme, with that tag. Each one's package initialisation
// costs memory in every process, whatever the command (docs/operations.md,
// "Smaller builds"); the drivers_*.go files link them in.
var optionalDrivers = map[string]string{
	"s3":     "no_s3blob",
	"gs":     "no_gcsblob",
	"azblob": "no_azureblob",
}
