package cluster

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/keyutil"
)

// user is an identity the API server knows by a static bearer token.
type user struct {
	name   string
	groups []string
	token  string
}

// The users of a cluster. The components sign in as the users Kubernetes'
// bootstrap RBAC policy already binds to their roles, so RBAC is on and each
// has only what a real cluster grants it. The controller manager goes
// further and runs each controller under its own service account
// (--use-service-account-credentials). kwok stands in for every kubelet at
// once, which no single node identity may do, so it and the tests' admin are
// cluster administrators.
const (
	adminUser             = "trainfn-e2e-admin"
	controllerManagerUser = "system:kube-controller-manager"
	schedulerUser         = "system:kube-scheduler"
	kwokUser              = "kwok"
)

func newUsers(more map[string][]string) ([]user, error) {
	masters := []string{"system:masters"}
	users := []user{
		{name: adminUser, groups: masters},
		{name: controllerManagerUser},
		{name: schedulerUser},
		{name: kwokUser, groups: masters},
	}
	for _, name := range slices.Sorted(maps.Keys(more)) {
		users = append(users, user{name: name, groups: more[name]})
	}
	for i := range users {
		token, err := randomToken()
		if err != nil {
			return nil, err
		}
		users[i].token = token
	}
	return users, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeTokenFile writes the API server's --token-auth-file: token, user
// name, uid and groups.
func writeTokenFile(path string, users ...user) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	for _, u := range users {
		if err := w.Write([]string{u.token, u.name, u.name, strings.Join(u.groups, ",")}); err != nil {
			return err
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeServiceAccountKey writes the key the API server signs and checks
// service account tokens with; the controllers' own tokens are signed by it.
func writeServiceAccountKey(path string) error {
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return err
	}
	return os.WriteFile(path, key, 0o600)
}

// writeKubeconfig writes a kubeconfig for one user of the cluster.
func writeKubeconfig(dir string, server, caFile string, u user) (string, error) {
	name := strings.NewReplacer(":", "-").Replace(u.name)
	config := clientcmdapi.NewConfig()
	config.Clusters["trainfn-e2e"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	config.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: u.token}
	config.Contexts["trainfn-e2e"] = &clientcmdapi.Context{Cluster: "trainfn-e2e", AuthInfo: name}
	config.CurrentContext = "trainfn-e2e"
	path := filepath.Join(dir, name+".kubeconfig")
	return path, clientcmd.WriteToFile(*config, path)
}
