package playground

// NewHandlerFS exposes the fs-taking constructor to the external tests so
// the CDN fallback can be exercised whatever the build embedded.
var NewHandlerFS = newHandler

// AssetIntegrity returns the pinned SRI hash of each vendor asset by name.
func AssetIntegrity() map[string]string {
	m := make(map[string]string, len(vendorAssets))
	for _, a := range vendorAssets {
		m[a.name] = a.integrity
	}
	return m
}
