// CoreDNS with only the plugins a local cluster needs: Service and Pod names from the Kubernetes API
// (`kubernetes`), answered from a cache, errors and queries logged, a health and a readiness endpoint. The
// default build's cloud DNS plugins are left out: they are most of its dependencies and of its build time.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() {
	coremain.Run()
}
