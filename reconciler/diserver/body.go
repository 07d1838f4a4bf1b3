package diserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
)

// Limits on request bodies. A replicas body is a few bytes; a profilings
// body is stored in an annotation, and the API server takes at most 256 KiB
// of annotations per object.
const (
	MaxReplicasBody   = 4 << 10
	MaxProfilingsBody = 64 << 10
)

// replicasBody is the body of POST and DELETE .../replicas.
type replicasBody struct {
	Replicas *int64 `json:"replicas"`
}

// profilingsBody is the body of POST .../profilings.
type profilingsBody struct {
	Data json.RawMessage `json:"data"`
}

// decodeReplicas reads {"replicas": n}, n >= 1: how many workers to add or
// remove.
func decodeReplicas(body io.Reader) (int64, *requestError) {
	var b replicasBody
	if err := decodeStrict(body, MaxReplicasBody, `{"replicas": n}`, &b); err != nil {
		return 0, err
	}
	switch {
	case b.Replicas == nil:
		return 0, fail(http.StatusBadRequest, `replicas: required, as in {"replicas": 1}`)
	case *b.Replicas < 1:
		return 0, fail(http.StatusBadRequest, "replicas: must be at least 1, got %d", *b.Replicas)
	}
	return *b.Replicas, nil
}

// decodeProfilings reads {"data": {...}} and returns the data, compacted:
// it is stored as it came, less the spaces.
func decodeProfilings(body io.Reader) (json.RawMessage, *requestError) {
	var b profilingsBody
	if err := decodeStrict(body, MaxProfilingsBody, `{"data": {...}}`, &b); err != nil {
		return nil, err
	}
	if len(b.Data) == 0 {
		return nil, fail(http.StatusBadRequest, `data: required, as in {"data": {"throughput": 1.5}}`)
	}
	if b.Data[0] != '{' {
		return nil, fail(http.StatusBadRequest, "data: must be a JSON object, got %s", kindOfJSON(b.Data))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b.Data); err != nil {
		// The decoder has checked the syntax already.
		return nil, fail(http.StatusBadRequest, "data: %v", err)
	}
	return compact.Bytes(), nil
}

// decodeStrict reads one JSON object of at most limit bytes into v, with no
// field v does not know: a misspelt field is an error, never ignored.
func decodeStrict(body io.Reader, limit int64, want string, v any) *requestError {
	if body == nil {
		body = http.NoBody
	}
	raw, err := io.ReadAll(io.LimitReader(body, limit+1))
	var tooLarge *http.MaxBytesError
	var timeout net.Error
	switch {
	case errors.As(err, &tooLarge) || err == nil && int64(len(raw)) > limit:
		return fail(http.StatusRequestEntityTooLarge, "body: larger than %d bytes", limit)
	case errors.As(err, &timeout) && timeout.Timeout():
		return fail(http.StatusRequestTimeout, "body: not sent in time: the whole request must come within %s", ReadTimeout)
	case err != nil:
		return fail(http.StatusBadRequest, "body: reading: %v", err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return fail(http.StatusBadRequest, "body: missing; want %s", want)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fail(http.StatusBadRequest, "%s", describeJSONError(err, want))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail(http.StatusBadRequest, "body: more than one JSON value; want %s", want)
	}
	return nil
}

// describeJSONError names the field a decoding error is about.
func describeJSONError(err error, want string) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Sprintf("%s: want %s, got %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("body: want %s, got %s", want, typeErr.Value)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("body: not JSON (%v); want %s", err, want)
	}
	// The decoder's remaining errors are about unknown fields.
	return fmt.Sprintf("body: %s; want %s", strings.TrimPrefix(err.Error(), "json: "), want)
}

// jsonKind names, for a message, the JSON values a Go type decodes.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// kindOfJSON names the kind of a JSON value for a message.
func kindOfJSON(v json.RawMessage) string {
	switch v[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
