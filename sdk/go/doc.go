// Package gatehouse is the Gatehouse server SDK for Go: validate the pass tokens your forms receive and
// issue server tokens, with retries, idempotency keys and automatic failover to the standby service.
//
// Construct one Client per app and share it (it is safe for concurrent use):
//
//	client, err := gatehouse.NewClient(appKey, appSecret, gatehouse.WithBaseURL("https://gatehouse.example.com"))
//	if err != nil {
//		log.Fatal(err) // a configuration mistake, in one precise sentence
//	}
//	verdict, err := client.Validate(ctx, r.PostFormValue("gatehouse-token"), &gatehouse.ValidateParams{
//		ClientIP:       clientIP,
//		ExpectedAction: "login",
//	})
//	if err != nil {
//		// No verdict could be had: credentials, network, 5xx after the retries. See *Error.
//	}
//	if !verdict.Accepted {
//		// Replayed, expired, forged, degraded, client-only or minted for another action.
//	}
//
// A verdict is a result, never an error: a token that is replayed, expired, unknown or forged gives
// Valid false and an ErrorCode. Errors (always *Error) are for when no verdict could be had.
//
// Tokens are routed by prefix: pt_ and dg_ to the main API's POST /v1/validate; offline_ (minted by the
// standby service while the main API was down) to the backup API hosts' POST /api/validate, one after the
// other, then to the main API; co_ tokens (made in a browser that reached no Gatehouse service) are
// reported client-only and never valid, without any request.
package gatehouse
