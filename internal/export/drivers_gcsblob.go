//go:build !no_gcsblob

package export

import _ "gocloud.dev/blob/gcsblob" // gs://
