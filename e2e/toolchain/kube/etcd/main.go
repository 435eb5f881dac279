// Command etcd is the etcd server, as the upstream binary: etcdmain.Main with the process arguments.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
