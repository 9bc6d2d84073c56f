package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/media"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// MaxMediaBytes caps an uploaded file.
const MaxMediaBytes = 20 << 20

type RegisterMediaRequest struct {
	Filename    string `json:"filename" minLength:"1" maxLength:"255"`
	ContentType string `json:"content_type" enum:"image/png,image/jpeg"`
	SizeBytes   int64  `json:"size_bytes" minimum:"1" maximum:"20971520" doc:"The exact size of the file to upload"`
	SHA256      string `json:"sha256,omitempty" pattern:"^[0-9a-fA-F]{64}$" doc:"The file's SHA-256, hex. Required when the service stores media in S3 (uploads go straight to the store, which checks it); optional otherwise, and then checked on upload."`
}

type RegisterMediaInput struct {
	IdempotencyKeyHeader
	RawBody []byte
	Body    RegisterMediaRequest
}

// UploadTarget says where to send the bytes.
type UploadTarget struct {
	Method string `json:"method" example:"PUT"`
	URL    string `json:"url" example:"/v1/media/0b7c.../content" doc:"Where to send the bytes: this API's upload route, or a pre-signed URL of the object store (a credential: keep it to yourself; it expires at expires_at). A repeated registration with the same Idempotency-Key answers a fresh URL."`
	// Headers are sent exactly as given with a pre-signed URL.
	Headers   map[string]string `json:"headers,omitempty" doc:"Headers to send exactly as given (pre-signed uploads: Content-Type, Content-Length and x-amz-checksum-sha256)"`
	ExpiresAt *time.Time        `json:"expires_at,omitempty" doc:"When a pre-signed URL stops working; register again with the same Idempotency-Key, or read the media, for a new one"`
}

// Download is a pre-signed URL of an original or a variant.
type Download struct {
	URL       string    `json:"url" doc:"A pre-signed GET of the object store; a credential until expires_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// MediaVariant is a derived file as clients see it (its storage key stays
// internal).
type MediaVariant struct {
	Name      string `json:"name" example:"thumbnail"`
	SizeBytes int64  `json:"size_bytes"`
}

// Media is an uploaded file as clients see it.
type Media struct {
	ID          uuid.UUID      `json:"id" format:"uuid"`
	Filename    string         `json:"filename"`
	ContentType string         `json:"content_type"`
	SizeBytes   int64          `json:"size_bytes"`
	Status      string         `json:"status" enum:"awaiting_upload,processing,ready,rejected"`
	Variants    []MediaVariant `json:"variants"`
	Reason      string         `json:"reason,omitempty" doc:"Why the file was rejected"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
	// Upload and Downloads are signed for one answer of getMedia, with a
	// store that signs (S3), and never stored.
	Upload    *UploadTarget       `json:"upload,omitempty" doc:"getMedia only, with an S3 store, while awaiting the upload: a fresh pre-signed upload"`
	Downloads map[string]Download `json:"downloads,omitempty" doc:"getMedia only, with an S3 store, once ready: pre-signed downloads of the original and each variant, by name (original, thumbnail, medium)"`
}

type MediaRegistered struct {
	Media  Media        `json:"media"`
	Upload UploadTarget `json:"upload"`
}

type MediaCompleted struct {
	Media     Media     `json:"media"`
	Operation Operation `json:"operation"`
}

type CompleteMediaInput struct {
	IdempotencyKeyHeader
	ID uuid.UUID `path:"id" format:"uuid"`
}

type UploadMediaInput struct {
	ID      uuid.UUID `path:"id" format:"uuid"`
	RawBody []byte    `contentType:"image/png"`
}

type contentTypeKey struct{}

// captureContentType hands the request's Content-Type to the handler. It is
// the media type of the body, which OpenAPI describes in the request body,
// not as a header parameter.
func captureContentType(ctx huma.Context, next func(huma.Context)) {
	next(huma.WithValue(ctx, contentTypeKey{}, ctx.Header("Content-Type")))
}

func toMedia(m model.Media) Media {
	variants := make([]MediaVariant, 0, len(m.Variants))
	for _, v := range m.Variants {
		variants = append(variants, MediaVariant{Name: v.Name, SizeBytes: v.SizeBytes})
	}
	return Media{ID: m.ID, Filename: m.Filename, ContentType: m.ContentType, SizeBytes: m.SizeBytes,
		Status: string(m.Status), Variants: variants, Reason: m.Reason, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

type ListMediaInput struct {
	ListParams
	Status string `query:"status" enum:"awaiting_upload,processing,ready,rejected" doc:"Only media in this state"`
}

func (h *handlers) registerMedia(api huma.API) {
	registerIdempotent(api, needs(model.ScopeMediaWrite, created(post("registerMedia", "/v1/media", "media", "Register an upload",
		"Creates the media record; upload the bytes to the returned target, then complete. Idempotent.",
		400, 401, 403, 409, 413, 422, 500, 503))), h.deps.MaxBodyBytes, h.registerMediaUpload)
	huma.Register(api, needs(model.ScopeMediaWrite, huma.Operation{
		OperationID:  "uploadMediaContent",
		Method:       http.MethodPut,
		Path:         "/v1/media/{id}/content",
		Summary:      "Upload the bytes of a registered file",
		Description:  "Allowed until the upload is completed; a repeated upload replaces the bytes. The size and content type must match the registration.",
		Tags:         []string{"media"},
		Security:     bearer,
		MaxBodyBytes: MaxMediaBytes + 1,
		Middlewares:  huma.Middlewares{captureContentType},
		Errors:       []int{401, 403, 404, 409, 413, 422, 500, 503},
	}), h.uploadMedia)
	if op := registered(api, http.MethodPut, "/v1/media/{id}/content"); op != nil && op.RequestBody != nil {
		binary := &huma.MediaType{Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}
		op.RequestBody.Content = map[string]*huma.MediaType{"image/png": binary, "image/jpeg": binary}
	}
	registerTask(h, api, media.Kind, needs(model.ScopeMediaWrite, post("completeMediaUpload", "/v1/media/{id}/complete", "media", "Complete an upload",
		"Starts validating the file and deriving its variants, once however often it is asked. Idempotent.",
		400, 401, 403, 404, 409, 500, 503)), atOperation,
		func(ctx context.Context, tx ports.Tx, p model.Principal, in *CompleteMediaInput) (MediaCompleted, model.Operation, error) {
			m, op, err := h.deps.Media.Complete(ctx, tx, p, in.ID)
			return MediaCompleted{Media: toMedia(m), Operation: toOperation(op)}, op, err
		})
	registerRead(api, model.ScopeMediaRead, "getMedia", "/v1/media/{id}", "Read a media record", "media", h.readMedia, toMediaRead)
	registerList[ListMediaInput](api, h, model.ScopeMediaRead, "listMedia", "/v1/media", "List media", "media", "The workspace's media.", ports.Tx.Media, toMedia)
}

// registerMediaUpload registers media. The saved response (replayed for
// the same Idempotency-Key) names the API's upload route; a pre-signed
// target replaces it in each answer, fresh or replayed, so the saved
// response never holds a signed URL and a replay gets a URL that works.
func (h *handlers) registerMediaUpload(ctx context.Context, in *RegisterMediaInput) (*IdempotentOutput[MediaRegistered], error) {
	out, err := h.registerMediaRecord(ctx, in)
	if err != nil || !h.deps.Media.DirectUploads() {
		return out, err
	}
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	m, err := h.deps.Media.Get(ctx, p, out.Body.Media.ID)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if target, ok, err := h.uploadTarget(ctx, m); err != nil {
		return nil, toProblem(ctx, err)
	} else if ok {
		out.Body.Upload = *target
	}
	return out, nil
}

// uploadTarget is m's pre-signed upload, if the store signs and m awaits
// its upload.
func (h *handlers) uploadTarget(ctx context.Context, m model.Media) (*UploadTarget, bool, error) {
	req, ok, err := h.deps.Media.UploadURL(ctx, m)
	if err != nil || !ok {
		return nil, false, err
	}
	return &UploadTarget{Method: req.Method, URL: req.URL, Headers: req.Headers, ExpiresAt: &req.ExpiresAt}, true, nil
}

func (h *handlers) registerMediaRecord(ctx context.Context, in *RegisterMediaInput) (*IdempotentOutput[MediaRegistered], error) {
	return runIdempotent(ctx, h.deps.Idempotency, in.RawBody,
		func(ctx context.Context, tx ports.Tx, p model.Principal) (int, string, MediaRegistered, error) {
			m, err := h.deps.Media.Register(ctx, tx, p, media.Registration{
				Filename: in.Body.Filename, ContentType: in.Body.ContentType, SizeBytes: in.Body.SizeBytes, SHA256: in.Body.SHA256,
			})
			if err != nil {
				return 0, "", MediaRegistered{}, err
			}
			loc := "/v1/media/" + m.ID.String()
			return http.StatusCreated, loc, MediaRegistered{
				Media:  toMedia(m),
				Upload: UploadTarget{Method: http.MethodPut, URL: loc + "/content"},
			}, nil
		})
}

func (h *handlers) uploadMedia(ctx context.Context, in *UploadMediaInput) (*ReadOutput[Media], error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	contentType, _ := ctx.Value(contentTypeKey{}).(string)
	m, err := h.deps.Media.Upload(ctx, p, in.ID, contentType, in.RawBody)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &ReadOutput[Media]{Body: toMedia(m)}, nil
}

// mediaWithURLs is a media read with the pre-signed requests signed for
// this one answer.
type mediaWithURLs struct {
	media     model.Media
	upload    *UploadTarget
	downloads map[string]Download
}

// readMedia reads a media and, with a store that signs, a fresh upload
// target (awaiting its upload) or its downloads (ready).
func (h *handlers) readMedia(ctx context.Context, p model.Principal, id uuid.UUID) (mediaWithURLs, error) {
	m, err := h.deps.Media.Get(ctx, p, id)
	if err != nil {
		return mediaWithURLs{}, err
	}
	out := mediaWithURLs{media: m}
	if out.upload, _, err = h.uploadTarget(ctx, m); err != nil {
		return mediaWithURLs{}, err
	}
	urls, _, err := h.deps.Media.DownloadURLs(ctx, m)
	if err != nil {
		return mediaWithURLs{}, err
	}
	for name, req := range urls {
		if out.downloads == nil {
			out.downloads = map[string]Download{}
		}
		out.downloads[name] = Download{URL: req.URL, ExpiresAt: req.ExpiresAt}
	}
	return out, nil
}

func toMediaRead(m mediaWithURLs) Media {
	out := toMedia(m.media)
	out.Upload, out.Downloads = m.upload, m.downloads
	return out
}
