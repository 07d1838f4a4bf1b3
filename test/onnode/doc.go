// Package onnode runs trainfn's jobs as real containers on a real node
// (package test/node): what the rendered objects do under a kubelet,
// judged by what each job reports. Its tests need root and the node's
// tools and images (make node-tools); they run with -tags e2e.
package onnode
