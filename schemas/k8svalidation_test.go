package schemas

// The rules of schemas/k8s/validation.cue held to the API server's own
// code: every quantity is read as the API server's JSON decoding reads
// one (resource.Quantity's UnmarshalJSON, then ValidateNonnegativeQuantity),
// every port as IsValidPortNum and IsValidPortName take them, on every
// string of a small alphabet up to a few characters and on longer cases
// picked by hand. What the two say must be the same: the same values
// accepted, and each refused for the same reasons, in the same words.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// k8sDefinition is a definition of the Kubernetes types' schema.
func k8sDefinition(t *testing.T, name string) cue.Value {
	t.Helper()
	v := NewValidator()
	def, err := v.schema(Schema{Package: "./k8s", Definition: name})
	require.NoError(t, err)
	return def
}

// ruleMessages are the messages of the rules a value breaks: what the
// schema's error() calls say, in order, each once.
func ruleMessages(v cue.Value) []string {
	var out []string
	for _, e := range cueerrors.Errors(v.Validate(cue.Concrete(true), cue.All())) {
		format, args := e.Msg()
		if format != "%s" || len(args) != 1 {
			continue
		}
		if m := fmt.Sprint(args[0]); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// wordsOf are the strings of the alphabet, of up to n characters.
func wordsOf(alphabet string, n int) []string {
	out := []string{""}
	last := []string{""}
	for range n {
		var next []string
		for _, s := range last {
			for _, r := range alphabet {
				next = append(next, s+string(r))
			}
		}
		out = append(out, next...)
		last = next
	}
	return out
}

// apiServerQuantity is what the API server says of a quantity in a pod's
// resources: nothing, or why it refuses it.
func apiServerQuantity(value any) []string {
	raw, _ := json.Marshal(value)
	var q resource.Quantity
	if err := json.Unmarshal(raw, &q); err != nil {
		return []string{err.Error()}
	}
	if q.Sign() < 0 {
		return []string{"must be greater than or equal to 0"}
	}
	return nil
}

func TestQuantitiesAsTheAPIServerReadsThem(t *testing.T) {
	quantity := k8sDefinition(t, "#Quantity")
	ctx := cuecontext.New()
	texts := wordsOf("01.+-eEiKMPu", 4)
	texts = append(texts,
		"100m", "1.5Gi", "2Ki", "1e3", "1E3", "1e+3", "1e-100", "-1e-100", "+1", ".5", "5.", ".", "+", "-", "Ki", "m", "e5",
		"0.0000000001", "-0.0000000001", ".5Ki", "-.5Ki", "1.5Ki", "-0", "-0.0", "-00.00Mi", "1EE5", "1Ki5", "1e5Ki", "1.2.3", "lots",
		"123456789012345678901234567890", "1234567890123456789.", "-1234567890123456789012.5", "1e999", "1e-999", "1e0000000000999",
		"1Q", "1k ", " 1", "1\t", "١", "1\u00a0", "5.e-10", "1.Ei", "-1.Ei", "Pi", ".Pi", "e-10", "e-9", "-e-100", "e-0100", "0Ei", "m", "-m")
	// White space around a quantity, which the API server's JSON
	// decoding trims, is refused here.
	for _, s := range texts {
		want, got := apiServerQuantity(s), ruleMessages(quantity.Unify(ctx.Encode(s)))
		if strings.TrimSpace(s) != s {
			assert.Equal(t, []string{apiServerQuantity("x")[0]}, got, "%q", s)
			continue
		}
		assert.Equal(t, want, got, "%q", s)
	}
	// Nor are exponents of more than 3 digits, which the API server is
	// slow to read: not read here either.
	for _, s := range []string{"1e1000", "1e-1000000", "1e123456789012345678", "1e1234567890123456789", "-5E+00012345"} {
		got := ruleMessages(quantity.Unify(ctx.Encode(s)))
		require.Len(t, got, 1, "%q", s)
		assert.True(t, strings.HasPrefix(got[0], "must have an exponent of at most 3 digits"), "%q: %s", s, got)
	}
	for _, n := range []any{0, 1, 1.5, 1e3, 1e-9, -1, -0.5, 1e300} {
		assert.Equal(t, apiServerQuantity(n), ruleMessages(quantity.Unify(ctx.Encode(n))), "%v", n)
	}
}

func TestPortsAsTheAPIServerTakesThem(t *testing.T) {
	containerPort := k8sDefinition(t, "#ContainerPort")
	grpc := k8sDefinition(t, "#GRPCAction")
	ctx := cuecontext.New()
	for _, n := range []int{-70000, -1, 0, 1, 80, 65535, 65536, 70000, 1 << 31} {
		want := validation.IsValidPortNum(n)
		for _, def := range []struct {
			name  string
			value cue.Value
		}{
			{"containerPort", containerPort.Unify(ctx.Encode(map[string]any{"containerPort": n}))},
			{"grpc.port", grpc.Unify(ctx.Encode(map[string]any{"port": n}))},
			{"httpGet.port", k8sDefinition(t, "#HTTPGetAction").Unify(ctx.Encode(map[string]any{"port": n}))},
			{"tcpSocket.port", k8sDefinition(t, "#TCPSocketAction").Unify(ctx.Encode(map[string]any{"port": n}))},
		} {
			got := ruleMessages(def.value)
			if n > 1<<31-2 && def.name != "httpGet.port" && def.name != "tcpSocket.port" {
				// Beyond int32: the generated schema's bound says so.
				assert.Error(t, def.value.Validate(cue.Concrete(true)), "%s %d", def.name, n)
				continue
			}
			assert.Equal(t, want, got, "%s %d", def.name, n)
		}
		hostPort := ruleMessages(containerPort.Unify(ctx.Encode(map[string]any{"containerPort": 80, "hostPort": n})))
		if n == 0 {
			assert.Empty(t, hostPort, "hostPort 0 publishes none")
		} else if n < 1<<31-1 {
			assert.Equal(t, want, hostPort, "hostPort %d", n)
		}
	}

	names := append(wordsOf("a1-A", 5), "http", "metrics-9090", strings.Repeat("a", 15), strings.Repeat("a", 16), "a_b", "é", "-"+strings.Repeat("-", 20))
	httpGet, tcp := k8sDefinition(t, "#HTTPGetAction"), k8sDefinition(t, "#TCPSocketAction")
	for _, name := range names {
		want := validation.IsValidPortName(name)
		slices.Sort(want)
		if want == nil {
			want = []string{}
		}
		for _, got := range [][]string{
			ruleMessages(httpGet.Unify(ctx.Encode(map[string]any{"port": name}))),
			ruleMessages(tcp.Unify(ctx.Encode(map[string]any{"port": name}))),
		} {
			if got == nil {
				got = []string{}
			}
			assert.Equal(t, want, got, "%q", name)
		}
		if name == "" {
			// A container port's name is optional: "" names none.
			want = []string{}
		}
		got := ruleMessages(containerPort.Unify(ctx.Encode(map[string]any{"containerPort": 80, "name": name})))
		if got == nil {
			got = []string{}
		}
		assert.Equal(t, want, got, "container port %q", name)
	}
}
