module lws-provider-go

go 1.22

require github.com/pulumi/pulumi/sdk/v3 v3.200.0

// `pulumi package add ../..` adds the generated SDK and a replace directive:
//   require github.com/pulumi-lws/pulumi-lws/sdk/go/lws v0.0.0
//   replace github.com/pulumi-lws/pulumi-lws/sdk/go/lws => ./sdks/lws
