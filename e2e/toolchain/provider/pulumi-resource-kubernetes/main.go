// Command pulumi-resource-kubernetes serves the pulumi-kubernetes provider of the pinned module.
//
// The module's own cmd/pulumi-resource-kubernetes embeds schema-embed.json and
// terraform-mapping-embed.json, which its go:generate step writes from schema.json and
// terraform-mapping.json and which a module download does not carry; e2e/toolchain/build.py writes
// them beside this file (the schema with its version set) before building.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var schema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
