package storm

import (
	"context"
	"encoding/json"
	"fmt"
)

// The storm and the replays register media (POST /v1/media): an
// idempotent write of one row and its idempotency record, with no
// background work, so what they measure is the idempotent path alone and
// an execution is one media row.
const mediaPath = "/v1/media"

// mediaBody is a registration request for filename.
func mediaBody(filename string) []byte {
	return fmt.Appendf(nil, `{"filename":%q,"content_type":"image/png","size_bytes":1024}`, filename)
}

// mediaID is the id of the media an answer describes, "" if none.
func mediaID(body []byte) string {
	var r struct {
		Media struct {
			ID string `json:"id"`
		} `json:"media"`
	}
	if json.Unmarshal(body, &r) != nil {
		return ""
	}
	return r.Media.ID
}

// mediaRowsNamed counts the media rows whose filename starts with a prefix.
const mediaRowsNamed = `SELECT count(*) FROM media WHERE starts_with(filename, $1)`

// executionsAfter stops sampling the connections (s) once a burst of
// media requests ended, and counts the media rows whose filename starts
// with name: how many times the service executed the requests.
func (d *deployment) executionsAfter(ctx context.Context, s *sampler, name string) (connPeak, int, error) {
	conns := s.finish()
	if err := ctx.Err(); err != nil {
		return conns, 0, err
	}
	n, err := d.count(ctx, mediaRowsNamed, name)
	return conns, n, err
}
