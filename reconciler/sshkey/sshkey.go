// Package sshkey makes the SSH key pair of a job that was given none: an
// Ed25519 key, in the Secret shape the rendered pods mount
// (kubernetes.io/ssh-auth, with the public key beside the private one).
package sshkey

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// Secret keys the rendered pods mount.
const (
	PrivateKey = "ssh-privatekey"
	PublicKey  = "ssh-publickey"
)

// Generate returns a new key pair: the private key in OpenSSH's format and
// the public key as an authorized_keys line.
func Generate() (map[string][]byte, error) {
	public, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating an SSH key: %w", err)
	}
	block, err := ssh.MarshalPrivateKey(private, "")
	if err != nil {
		return nil, fmt.Errorf("encoding the SSH private key: %w", err)
	}
	signer, err := ssh.NewPublicKey(public)
	if err != nil {
		return nil, fmt.Errorf("encoding the SSH public key: %w", err)
	}
	return map[string][]byte{
		PrivateKey: pem.EncodeToMemory(block),
		PublicKey:  ssh.MarshalAuthorizedKey(signer),
	}, nil
}
