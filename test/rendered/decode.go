package rendered

import (
	"bytes"
	"encoding/json"
	"testing"
)

// decodeStrict fills into from JSON, refusing fields the type lacks: a
// rendered field the test would silently drop must fail it instead.
func decodeStrict(t testing.TB, doc []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("reading a rendered object: %v\n%s", err, doc)
	}
}
