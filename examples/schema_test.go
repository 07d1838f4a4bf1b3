package examples

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/trainfn/trainfn/test/testtool"
)

// exportSchemas has the workspace's trainfn write every kind's JSON Schema
// under dir, as the editors example's README says.
func exportSchemas(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(workspace, "bin", "trainfn"), "schema", "-o", dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "trainfn schema -o:\n%s", out)
}

// kubeconformResult is one document of kubeconform's JSON output.
type kubeconformResult struct {
	Filename string `json:"filename"`
	Kind     string `json:"kind"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Status   string `json:"status"`
	Msg      string `json:"msg"`
}

// kubeconformWithSchemas validates files with the exported schemas alone: documents
// of kinds trainfn has no schema for are skipped.
func kubeconformWithSchemas(t *testing.T, schemas string, files ...string) []kubeconformResult {
	t.Helper()
	cmd := exec.Command(testtool.Find(t, "kubeconform"), append([]string{
		"-schema-location", schemas + "/{{.Group}}/{{.ResourceKind}}_{{.ResourceAPIVersion}}.json",
		"-ignore-missing-schemas", "-strict", "-output", "json", "-verbose",
	}, files...)...)
	stdout, stderr, _ := run(cmd) // exit 1 when a document is invalid; the output says which
	var out struct{ Resources []kubeconformResult }
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), "kubeconform: %s%s", stdout, stderr)
	return slices.DeleteFunc(out.Resources, func(r kubeconformResult) bool { return r.Status == "" }) // empty documents
}

// schemaKinds are the kinds with a schema, by apiVersion and kind.
var schemaKinds = []string{
	"kubeflow.org/v2beta1 MPIJob", "kubeflow.org/v1 MPIJob", "kubeflow.org/v1alpha1 MPIJob", "kubeflow.org/v1alpha2 MPIJob",
	"kubeflow.org/v1 PyTorchJob", "diengine.opendilab.org/v2alpha1 DIJob", "fn.trainfn.dev/v1alpha1 TrainFn",
	"trainer.kubeflow.org/v1alpha1 TrainJob", "trainer.kubeflow.org/v1alpha1 TrainingRuntime",
	"trainer.kubeflow.org/v1alpha1 ClusterTrainingRuntime",
}

// readAsYAML12 are golden cases whose input means what it means only to a
// YAML 1.2 reader, as trainfn, kustomize and kpt are: plain strings that
// kubeconform, a YAML 1.1 reader, takes for booleans and numbers. They show
// that the output quotes such strings.
var readAsYAML12 = []string{"yaml-1.1-strings"}

// TestKubeconformAcceptsWhatTrainfnAccepts: every document trainfn renders
// without error (the job specs of the examples, every golden case that has
// an expected output but those of readAsYAML12, the compatibility corpus)
// passes kubeconform with the exported schemas.
func TestKubeconformAcceptsWhatTrainfnAccepts(t *testing.T) {
	schemas := t.TempDir()
	exportSchemas(t, schemas)
	files, err := filepath.Glob(filepath.Join(workspace, "examples", "jobs", "*.yaml"))
	require.NoError(t, err)
	for _, expected := range testtool.GoldenOutputs(t) {
		dir := filepath.Dir(expected)
		if slices.Contains(readAsYAML12, filepath.Base(dir)) {
			continue
		}
		files = append(files, filepath.Join(dir, "input.yaml"))
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
			files = append(files, filepath.Join(dir, "config.yaml"))
		}
	}
	corpus := testtool.UpstreamCorpus(t)
	require.NoError(t, filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	}))

	checked := map[string]int{}
	for _, r := range kubeconformWithSchemas(t, schemas, files...) {
		kind := r.Version + " " + r.Kind
		if !slices.Contains(schemaKinds, kind) {
			assert.Equal(t, "statusSkipped", r.Status, "%s: %s %s has no trainfn schema", r.Filename, kind, r.Name)
			continue
		}
		if assert.Equal(t, "statusValid", r.Status, "%s: %s %s: %s", r.Filename, kind, r.Name, r.Msg) {
			checked[kind]++
		}
	}
	for _, kind := range schemaKinds {
		assert.NotZero(t, checked[kind], "no %s was checked", kind)
	}
	t.Logf("kubeconform accepted %v", checked)
}

// TestKubeconformRefusesBrokenSpecs: a misspelt field, a value of the wrong
// type and one outside an enum are refused, and the message names the
// field.
func TestKubeconformRefusesBrokenSpecs(t *testing.T) {
	schemas := t.TempDir()
	exportSchemas(t, schemas)
	pi, err := os.ReadFile(filepath.Join(workspace, "examples", "jobs", "pi.yaml"))
	require.NoError(t, err)
	for _, c := range []struct{ name, old, new, says string }{
		{"misspelt field", "slotsPerWorker:", "slotPerWorker:", "at '/spec': additional properties 'slotPerWorker' not allowed"},
		{"misspelt pod field", "runAsUser:", "runAsUsr:", "additional properties 'runAsUsr' not allowed"},
		{"wrong type", "slotsPerWorker: 1", "slotsPerWorker: one", "at '/spec/slotsPerWorker': got string, want null or integer"},
		{"not in the enum", "cleanPodPolicy: Running", "cleanPodPolicy: Always",
			"at '/spec/runPolicy/cleanPodPolicy': value must be one of 'None', 'Running', 'All'"},
		{"out of bounds", "replicas: 2", "replicas: 100001", "at '/spec/mpiReplicaSpecs/Worker/replicas': maximum: got 100,001, want 100,000"},
		{"missing required field", "            name: mpi-worker\n", "", "at '/spec/mpiReplicaSpecs/Worker/template/spec/containers/0': missing property 'name'"},
		{"not a DNS label", "name: pi\n", "name: Pi\n", "at '/metadata/name': 'Pi' does not match pattern"},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, string(pi), c.old)
			file := filepath.Join(t.TempDir(), "pi.yaml")
			require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(pi), c.old, c.new, 1)), 0o644))
			results := kubeconformWithSchemas(t, schemas, file)
			require.Len(t, results, 1)
			assert.Equal(t, "statusInvalid", results[0].Status)
			assert.Contains(t, results[0].Msg, c.says)
		})
	}
}

// yamlLanguageServerVersion is the yaml-language-server the editor test
// runs, installed from npm into the repository's .cache.
const yamlLanguageServerVersion = "1.25.0"

// TestYAMLLanguageServer follows examples/editors/README.md with the
// language server VS Code's YAML extension and other editors run: the
// modeline of examples/editors/pi.yaml loads the exported schema, hover
// shows the CUE schema's doc comments, a correct job gets no diagnostic and
// broken fields get theirs, on their line; the yaml.schemas setting of
// examples/editors/settings.json does the same for files without a modeline.
func TestYAMLLanguageServer(t *testing.T) {
	server := yamlLanguageServer(t)
	dir := copyWorkspace(t)
	exportSchemas(t, filepath.Join(dir, "examples", "editors", "schemas"))
	settings, err := os.ReadFile(filepath.Join(dir, "examples", "editors", "settings.json"))
	require.NoError(t, err)
	var vscode map[string]any
	require.NoError(t, json.Unmarshal(settings, &vscode))

	lsp := startLanguageServer(t, server, dir, map[string]any{
		"validate": true, "hover": true, "completion": true,
		"schemas": vscode["yaml.schemas"],
		// No network here: no catalogue of public schemas.
		"schemaStore":        map[string]any{"enable": false},
		"kubernetesCRDStore": map[string]any{"enable": false},
	})

	modeline := filepath.Join(dir, "examples", "editors", "pi.yaml")
	good, err := os.ReadFile(modeline)
	require.NoError(t, err)
	assert.Empty(t, lsp.open(t, modeline, string(good)), "the example as it is")
	line := lineContaining(t, string(good), "slotsPerWorker:")
	hover := lsp.hover(t, modeline, line, 4)
	assert.Contains(t, hover, "Slots (processes) each worker offers in the hostfile.", "the CUE schema's comment")

	broken := strings.NewReplacer(
		"slotsPerWorker: 1", "slotPerWorker: 1",
		"cleanPodPolicy: Running", "cleanPodPolicy: Sometimes",
		"replicas: 2", "replicas: two",
	).Replace(string(good))
	brokenFile := filepath.Join(dir, "examples", "editors", "broken.yaml")
	diags := lsp.open(t, brokenFile, broken)
	assert.Equal(t, map[int]string{
		lineContaining(t, broken, "slotPerWorker:"):            "Property slotPerWorker is not allowed.",
		lineContaining(t, broken, "cleanPodPolicy: Sometimes"): `Value is not accepted. Valid values: "None", "Running", "All", null.`,
		lineContaining(t, broken, "replicas: two"):             `Incorrect type. Expected "integer".`,
	}, diags)

	// No modeline: the yaml.schemas setting picks the schema by path.
	setting := filepath.Join(dir, "examples", "jobs", "pi.yaml")
	job, err := os.ReadFile(setting)
	require.NoError(t, err)
	assert.Empty(t, lsp.open(t, setting, string(job)))
	typo := strings.Replace(string(job), "sshAuthMountPath:", "sshAuthMountpath:", 1)
	assert.Equal(t, map[int]string{lineContaining(t, typo, "sshAuthMountpath:"): "Property sshAuthMountpath is not allowed."},
		lsp.open(t, filepath.Join(dir, "examples", "jobs", "typo.yaml"), typo))
}

// yamlLanguageServer is the command line of the pinned yaml-language-server,
// which hack/tools.sh installs from npm into the repository's .cache.
func yamlLanguageServer(t *testing.T) []string {
	t.Helper()
	node := testtool.Find(t, "node")
	prefix, err := filepath.Abs(filepath.Join("..", ".cache", "npm", "yaml-language-server@"+yamlLanguageServerVersion))
	require.NoError(t, err)
	bin := filepath.Join(prefix, "node_modules", "yaml-language-server", "bin", "yaml-language-server")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv(testtool.RequireEnv) != "" {
			t.Fatalf("yaml-language-server %s is not installed: run make tools", yamlLanguageServerVersion)
		}
		t.Skipf("yaml-language-server %s is not installed: run make tools (make test does)", yamlLanguageServerVersion)
	}
	return []string{node, bin, "--stdio"}
}

// languageServer talks the Language Server Protocol to a server over its
// standard input and output, as an editor does.
type languageServer struct {
	in       io.Writer
	settings map[string]any
	next     int

	mu          sync.Mutex
	responses   map[int]chan json.RawMessage
	diagnostics map[string]chan []lspDiagnostic
}

type lspDiagnostic struct {
	Range struct {
		Start struct{ Line int } `json:"start"`
	} `json:"range"`
	Message string `json:"message"`
}

func startLanguageServer(t *testing.T, command []string, root string, settings map[string]any) *languageServer {
	t.Helper()
	cmd := exec.Command(command[0], command[1:]...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr testtool.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("yaml-language-server's standard error:\n%s", stderr.String())
		}
	})
	s := &languageServer{in: in, settings: settings, responses: map[int]chan json.RawMessage{}, diagnostics: map[string]chan []lspDiagnostic{}}
	go s.read(bufio.NewReader(out))

	s.request(t, "initialize", map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          lspFileURI(root),
		"workspaceFolders": []any{map[string]any{"uri": lspFileURI(root), "name": "trainfn"}},
		"capabilities": map[string]any{
			"workspace":    map[string]any{"configuration": true},
			"textDocument": map[string]any{"hover": map[string]any{"contentFormat": []string{"plaintext"}}},
		},
	})
	s.notify("initialized", map[string]any{})
	s.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"yaml": settings}})
	return s
}

// open opens a document and returns the diagnostics of its first
// validation, by line.
func (s *languageServer) open(t *testing.T, path, text string) map[int]string {
	t.Helper()
	uri := lspFileURI(path)
	ch := s.diagnosticsOf(uri)
	s.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "yaml", "version": 1, "text": text,
	}})
	select {
	case diags := <-ch:
		out := map[int]string{}
		for _, d := range diags {
			out[d.Range.Start.Line] = d.Message
		}
		return out
	case <-time.After(30 * time.Second):
		t.Fatalf("no diagnostics for %s", path)
		return nil
	}
}

func (s *languageServer) hover(t *testing.T, path string, line, character int) string {
	t.Helper()
	var result struct {
		Contents json.RawMessage `json:"contents"`
	}
	raw := s.request(t, "textDocument/hover", map[string]any{
		"textDocument": map[string]any{"uri": lspFileURI(path)},
		"position":     map[string]any{"line": line, "character": character},
	})
	require.NoError(t, json.Unmarshal(raw, &result), string(raw))
	return string(result.Contents)
}

func (s *languageServer) request(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	s.mu.Lock()
	s.next++
	id := s.next
	ch := make(chan json.RawMessage, 1)
	s.responses[id] = ch
	s.mu.Unlock()
	s.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case result := <-ch:
		return result
	case <-time.After(30 * time.Second):
		t.Fatalf("no answer to %s", method)
		return nil
	}
}

func (s *languageServer) notify(method string, params any) {
	s.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (s *languageServer) diagnosticsOf(uri string) chan []lspDiagnostic {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan []lspDiagnostic, 1)
	s.diagnostics[uri] = ch
	return ch
}

func (s *languageServer) write(msg any) {
	b, _ := json.Marshal(msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

// read dispatches what the server sends: answers to requests, diagnostics,
// and the server's own requests, which get the settings or an empty answer.
func (s *languageServer) read(r *bufio.Reader) {
	for {
		length := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(body, &msg) != nil {
			continue
		}
		switch {
		case msg.ID != nil && msg.Method == "workspace/configuration":
			var params struct{ Items []struct{ Section string } }
			_ = json.Unmarshal(msg.Params, &params)
			answer := make([]any, len(params.Items))
			for i, item := range params.Items {
				if item.Section == "yaml" {
					answer[i] = s.settings
				}
			}
			s.write(map[string]any{"jsonrpc": "2.0", "id": *msg.ID, "result": answer})
		case msg.ID != nil && msg.Method != "":
			s.write(map[string]any{"jsonrpc": "2.0", "id": *msg.ID, "result": nil})
		case msg.ID != nil:
			s.mu.Lock()
			ch := s.responses[*msg.ID]
			delete(s.responses, *msg.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- msg.Result
			}
		case msg.Method == "textDocument/publishDiagnostics":
			var params struct {
				URI         string          `json:"uri"`
				Diagnostics []lspDiagnostic `json:"diagnostics"`
			}
			_ = json.Unmarshal(msg.Params, &params)
			s.mu.Lock()
			ch := s.diagnostics[params.URI]
			delete(s.diagnostics, params.URI)
			s.mu.Unlock()
			if ch != nil {
				ch <- params.Diagnostics
			}
		}
	}
}

func lspFileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// lineContaining is the 0-based line of the first line of text that contains s.
func lineContaining(t *testing.T, text, s string) int {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		if strings.Contains(line, s) {
			return i
		}
	}
	t.Fatalf("no line with %q", s)
	return 0
}
