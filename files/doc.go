// Package files is the store of document files: the bytes behind
// gocloud.dev/blob, and the signed, short-lived URLs clients upload and
// download them through.
//
// Two modes, chosen by the bucket URL (BLOB_URL):
//
//   - local (the default, file:// or empty: fileblob under DATA_DIR):
//     Shipgraph signs its own URLs (HMAC-SHA256 over the method, the key,
//     the expiry and what the request must carry) and serves them with
//     Handler under /files/: PUT streams the body into the bucket, checking
//     its size and MD5 against the signed ones (a body that differs is
//     refused and nothing is kept); GET streams the object with the stored
//     Content-Type and a Content-Disposition carrying the file name
//     (ranges and HEAD through http.ServeContent). A tampered or expired
//     URL is a bare 403.
//   - presigned (s3:// and any other bucket URL): the store's own presigned
//     URLs are handed out (the PUT signs Content-Type and Content-MD5, the
//     GET the response's Content-Type and Content-Disposition), so bytes
//     never pass through Shipgraph.
//
// Either way, what a client uploaded is checked again (Check: size and MD5
// of the stored object) before a document may use it.
//
// Storage keys are random (NewKey); file names are display data only and
// never reach a key or a path. Signed ids of uploads (SignID, VerifyID)
// are ActiveStorage-style: the upload's id and an expiry under the same
// secret. The package knows nothing of accounts or SQL: the resolver layer
// (resolve/documents.go) keeps the upload records through db/.
package files
