package apitypes

// ErrorView is the JSON of every error response (docs/openapi.yaml, Error).
type ErrorView struct {
	Error string `json:"error"`
	// Fields names the request fields in error, with what is wrong, in English.
	Fields map[string]string `json:"fields,omitempty"`
	// FieldCodes are Fields as message codes, one for every key of Fields.
	FieldCodes map[string]Message `json:"field_codes,omitempty"`
}
