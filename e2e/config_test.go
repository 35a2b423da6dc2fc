package e2e

import (
	"strings"

	"github.com/toolgate/toolgate/internal/testsupport/refunds"
)

// plainRefundArgs is issue_refund's argument schema without the refunds
// fixture's order id pattern and reason: any order id, an amount of at
// least 1 paise.
const plainRefundArgs = `{type: object, required: [order_id, amount_paise], properties: {order_id: {type: string}, amount_paise: {type: integer, minimum: 1}}, additionalProperties: false}`

// server sets a test server's store (a YAML scalar) and its auth.keys
// entries, each a YAML flow map such as {name: a, key: b}.
func server(store string, keys ...string) refunds.Option {
	return refunds.Add("", "store: "+store+"\nauth:\n  keys: ["+strings.Join(keys, ", ")+"]\n")
}
