package sshkey

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/ssh"
)

func TestGenerateIsAPairSSHReads(t *testing.T) {
	keys, err := Generate()
	require.NoError(t, err)

	signer, err := ssh.ParsePrivateKey(keys[PrivateKey])
	require.NoError(t, err)
	public, _, _, _, err := ssh.ParseAuthorizedKey(keys[PublicKey])
	require.NoError(t, err)
	require.Equal(t, public.Marshal(), signer.PublicKey().Marshal(), "the public key is the private key's")
	require.Equal(t, ssh.KeyAlgoED25519, public.Type())

	other, err := Generate()
	require.NoError(t, err)
	require.NotEqual(t, keys[PrivateKey], other[PrivateKey], "every job gets its own key")
}

// OpenSSH itself, which the pods run, must read the key as the pods mount
// it (as id_rsa, whatever its type).
func TestOpenSSHReadsTheKey(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		if os.Getenv("TRAINFN_REQUIRE_TOOLS") != "" {
			t.Fatal("ssh-keygen is missing: run hack/tools.sh")
		}
		t.Skip("ssh-keygen is missing")
	}
	keys, err := Generate()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "id_rsa")
	require.NoError(t, os.WriteFile(path, keys[PrivateKey], 0o600))
	out, err := exec.Command(keygen, "-y", "-f", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, strings.TrimSpace(string(keys[PublicKey])), strings.TrimSpace(string(out)))
}
