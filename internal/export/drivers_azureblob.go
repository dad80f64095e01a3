//go:build !no_azureblob

package export

import _ "gocloud.dev/blob/azureblob" // azblob://
