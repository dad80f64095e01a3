//go:build !no_s3blob

package export

import _ "gocloud.dev/blob/s3blob" // s3://
