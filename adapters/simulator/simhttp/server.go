package simhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/oncehq/once/adapters/simulator/aisim"
	"github.com/oncehq/once/adapters/simulator/materialsim"
	"github.com/oncehq/once/adapters/simulator/platformsim"
	"github.com/oncehq/once/adapters/simulator/simcore"
	"github.com/oncehq/once/adapters/system"
	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// maxBody bounds the requests the server reads.
const maxBody = 1 << 20

// ServerOptions configure a Server.
type ServerOptions struct {
	// Latency is added to every call, before the system acts, unless its
	// platform has one in PlatformLatency.
	Latency time.Duration
	// PlatformLatency replaces Latency for the calls of a platform.
	PlatformLatency map[string]time.Duration
	// ShopBuckets and PlatformBuckets meter each platform's calls: per
	// shop and per platform. A call either bucket cannot take answers 429.
	ShopBuckets, PlatformBuckets map[string]simcore.BucketSize
	// Outages take platforms down for a while, from the server's start.
	Outages []Outage
	// Clock tells the buckets, the outages and the concurrency read-out the
	// time; the wall clock if nil. Latencies and holds are real time.
	Clock ports.Clock
	// Logger gets one line per call (kind, token, status, fault); never a
	// body or a credential. Nil discards.
	Logger *slog.Logger
}

// Server serves the simulated platform, AI provider and material source
// over HTTP, with every side effect kept in a Ledger first. Create it with
// NewServer; it is an http.Handler.
type Server struct {
	ledger   *Ledger
	platform *platformsim.Sim
	ai       *aisim.Sim
	material *materialsim.Sim
	faults   *faults
	latency  time.Duration
	clock    ports.Clock
	// platforms are the settings and buckets of each platform; inFlight
	// records the platform calls per shop and per ordering key.
	platforms *platforms
	inFlight  simcore.Concurrency
	log       *slog.Logger
	mux       *http.ServeMux
}

// NewServer builds the simulators on ledger, replaying the effects it
// already holds: a token executed by an earlier server on the same file
// answers with its first outcome, and listings keep their numbers.
func NewServer(ledger *Ledger, opts ServerOptions) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clock := opts.Clock
	if clock == nil {
		clock = system.NewClock()
	}
	s := &Server{
		ledger:    ledger,
		platform:  platformsim.New(platformsim.WithJournal(platformJournal{ledger})),
		ai:        aisim.New(aisim.WithJournal(aiJournal{ledger})),
		material:  materialsim.New(),
		faults:    newFaults(),
		latency:   opts.Latency,
		clock:     clock,
		platforms: newPlatforms(clock, opts),
		log:       log,
		mux:       http.NewServeMux(),
	}
	if err := s.restore(ledger.Entries(Filter{EffectsOnly: true})); err != nil {
		return nil, err
	}
	s.routes()
	return s, nil
}

// Close ends every held or delayed call with a 503 without acting: the
// server is going away. It does not close the ledger.
func (s *Server) Close() { s.faults.close() }

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// restore replays the ledger's effects into the simulators.
func (s *Server) restore(entries []Entry) error {
	var effects []platformsim.Effect
	var charges []aisim.Charge
	for _, e := range entries {
		var err error
		switch e.Kind {
		case KindVerify, KindListing:
			var eff platformsim.Effect
			err = json.Unmarshal(e.Data, &eff)
			effects = append(effects, eff)
		case KindGenerate:
			var c aisim.Charge
			err = json.Unmarshal(e.Data, &c)
			charges = append(charges, c)
		}
		if err != nil {
			return fmt.Errorf("ledger entry %d: %w", e.Seq, err)
		}
	}
	if err := s.platform.Restore(effects); err != nil {
		return fmt.Errorf("restore the platform: %w", err)
	}
	if err := s.ai.Restore(charges); err != nil {
		return fmt.Errorf("restore the AI provider: %w", err)
	}
	return nil
}

func (s *Server) routes() {
	s.mux.Handle("POST "+PathVerify, serveCall(s, KindVerify, func(ctx context.Context, c callInfo, b verifyBody) (verifyAnswer, error) {
		r, err := s.platform.VerifyCredentials(ctx, ports.VerifyCredentialsRequest{
			RequestToken: c.token, Platform: b.Platform, ExternalShopID: b.ExternalShopID, Credentials: c.creds,
		})
		return verifyAnswer{Valid: r.Valid, Reason: r.Reason}, err
	}))
	s.mux.Handle("POST "+PathListings, serveCall(s, KindListing, func(ctx context.Context, c callInfo, b listingBody) (listingAnswer, error) {
		r, err := s.platform.CreateListing(ctx, ports.CreateListingRequest{
			RequestToken: c.token, Platform: b.Platform, ExternalShopID: b.ExternalShopID, Credentials: c.creds,
			SKU: b.SKU, Title: b.Title, Description: b.Description, PriceMinor: b.PriceMinor, Currency: b.Currency,
		})
		return listingAnswer{ExternalListingID: r.ExternalListingID}, err
	}))
	s.mux.Handle("POST "+PathCatalog, serveCall(s, KindCatalog, func(ctx context.Context, c callInfo, b catalogBody) (catalogAnswer, error) {
		listings, err := s.platform.FetchCatalog(ctx, ports.FetchCatalogRequest{
			Platform: b.Platform, ExternalShopID: b.ExternalShopID, Credentials: c.creds,
		})
		if err == nil {
			err = s.recordRead(KindCatalog, b.ExternalShopID)
		}
		a := catalogAnswer{Listings: make([]catalogListing, 0, len(listings))}
		for _, l := range listings {
			a.Listings = append(a.Listings, catalogListing(l))
		}
		return a, err
	}))
	s.mux.Handle("POST "+PathGenerate, serveCall(s, KindGenerate, func(ctx context.Context, c callInfo, b generateBody) (generateAnswer, error) {
		r, err := s.ai.Generate(ctx, ports.AIRequest{
			RequestToken: c.token, Kind: b.Kind, Title: b.Title, Description: b.Description, Instructions: b.Instructions,
		})
		return generateAnswer(r), err
	}))
	s.mux.Handle("POST "+PathFetch, serveCall(s, KindFetch, func(ctx context.Context, _ callInfo, b fetchBody) (fetchAnswer, error) {
		data, contentType, err := s.material.Fetch(ctx, b.URL)
		if err == nil {
			// The source served a valid URL: recorded without its secrets.
			u, _ := url.Parse(b.URL)
			err = s.recordRead(KindFetch, materialsim.Redact(u))
		}
		return fetchAnswer{ContentType: contentType, Data: data}, err
	}))

	s.mux.HandleFunc("GET "+PathLedger, s.serveLedger)
	s.mux.HandleFunc("POST "+PathFaults, s.serveAddFault)
	s.mux.HandleFunc("DELETE "+PathFaults, func(w http.ResponseWriter, _ *http.Request) {
		s.faults.clear()
		w.WriteHeader(http.StatusNoContent)
	})
	s.mux.HandleFunc("GET "+PathHeld, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, heldAnswer{Held: s.faults.heldCalls()})
	})
	s.mux.HandleFunc("POST "+PathRelease, func(w http.ResponseWriter, _ *http.Request) {
		n := s.faults.release()
		s.log.Info("held calls released", "released", n)
		writeJSON(w, http.StatusOK, releaseAnswer{Released: n})
	})
	s.platformRoutes()
	s.mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}

// callInfo is what a call carries besides its body.
type callInfo struct {
	token string
	creds model.StoreCredentials
}

// serveCall is the one shape every simulated call goes through: decode,
// let a platform call through its platform's outage and buckets, apply
// the injected fault and the latency, let the system act, answer.
func serveCall[B, A any](s *Server, kind Kind, act func(context.Context, callInfo, B) (A, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := callInfo{
			token: r.Header.Get(HeaderIdempotencyKey),
			creds: model.StoreCredentials{APIKey: r.Header.Get(HeaderAPIKey), APISecret: r.Header.Get(HeaderAPISecret)},
		}
		var body B
		var answer A
		ended := func(int) {}
		fault, err := Fault{}, decodeBody(w, r, &body)
		if err == nil {
			dest, onPlatform := destinationOf(&body)
			latency := s.latency
			if onPlatform {
				ended = s.track(dest, c.token, r.Header.Get(HeaderOrderingKey))
				err = s.admit(w.Header(), dest)
				latency = s.platforms.latencyOf(dest.System, latency)
			}
			if err == nil {
				fault, err = s.run(kind, c.token, latency, func(ctx context.Context) error {
					var err error
					answer, err = act(ctx, c, body)
					return err
				})
			}
		}
		status := http.StatusOK
		if err != nil {
			status = errorStatus(err)
		}
		// Ended before the answer goes out: the caller may send its next
		// call of the same key as soon as it reads this one.
		ended(status)
		if err != nil {
			writeProblem(w, err)
		} else {
			writeJSON(w, status, answer)
		}
		s.log.Info("call", "kind", kind, "token", c.token, "status", status, "fault", fault.Action)
	}
}

// destinationOf is the shop a platform call's body names; false for the
// calls of the other systems.
func destinationOf(body any) (model.Destination, bool) {
	switch b := body.(type) {
	case *verifyBody:
		return model.Destination{System: b.Platform, Account: b.ExternalShopID}, true
	case *listingBody:
		return model.Destination{System: b.Platform, Account: b.ExternalShopID}, true
	case *catalogBody:
		return model.Destination{System: b.Platform, Account: b.ExternalShopID}, true
	}
	return model.Destination{}, false
}

// track records a platform call in flight under its shop and its ordering
// key (if it has one) and returns the function that records its answer.
func (s *Server) track(dest model.Destination, token, orderingKey string) func(status int) {
	keys := []string{InFlightShop(dest)}
	if orderingKey != "" {
		keys = append(keys, InFlightOrdering(orderingKey))
	}
	end := s.inFlight.Start(keys, token, s.clock.Now())
	return func(status int) { end(s.clock.Now(), status) }
}

// admit lets a platform call through its platform's outage and buckets,
// or says why not (503, or 429 with the wait), before anything else
// happens to it: no fault is used, the system does not act. The shop's
// quota goes into the answer's header either way.
func (s *Server) admit(h http.Header, dest model.Destination) error {
	g := s.platforms.admit(dest)
	if g.quota != "" {
		h.Set(HeaderCallLimit, g.quota)
	}
	switch {
	case g.down:
		return domain.Errorf(domain.CodeUnavailable, "simulated %s outage", dest.System)
	case g.wait > 0:
		h.Set(HeaderRateLimitScope, g.scope)
		return &domain.Error{Code: domain.CodeRateLimited, Message: "too many calls to " + dest.System + ", slow down", RetryAfter: g.wait}
	}
	return nil
}

// errClosing ends held and delayed calls when the server closes.
var errClosing = domain.Errorf(domain.CodeUnavailable, "the simulator is shutting down")

// run makes one call: the latency and the fault the call takes (if any)
// around act. The system acts whatever happens to the caller meanwhile,
// as a real one does once a request arrived: a caller that timed out or
// died does not undo it.
func (s *Server) run(kind Kind, token string, latency time.Duration, act func(context.Context) error) (Fault, error) {
	fault, _ := s.faults.take(kind)
	if latency > 0 && !s.faults.wait(latency) {
		return fault, errClosing
	}
	switch fault.Action {
	case ActionFail:
		return fault, domain.Errorf(domain.CodeUnavailable, "simulated outage")
	case ActionReject:
		return fault, domain.Errorf(domain.CodeValidation, "simulated rejection")
	case ActionDelay:
		if !s.faults.wait(time.Duration(fault.DelayMS) * time.Millisecond) {
			return fault, errClosing
		}
	case ActionHold:
		if !s.faults.hold(kind, token, false) {
			return fault, errClosing
		}
	}
	if err := act(context.Background()); err != nil {
		return fault, err
	}
	switch fault.Action {
	case ActionFailAfter:
		return fault, domain.Errorf(domain.CodeUnavailable, "simulated timeout after the call was executed")
	case ActionHoldAfter:
		if !s.faults.hold(kind, token, true) {
			return fault, errClosing
		}
	}
	return fault, nil
}

// recordRead keeps a read in the ledger (not an effect: nothing to replay).
func (s *Server) recordRead(kind Kind, subject string) error {
	if _, err := s.ledger.Append(Entry{Kind: kind, Subject: subject}); err != nil {
		return domain.Wrap(domain.CodeUnavailable, err, "the simulator could not record the read")
	}
	return nil
}

func (s *Server) serveLedger(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	effects, _ := strconv.ParseBool(q.Get("effects"))
	f := Filter{Kind: Kind(q.Get("kind")), Token: q.Get("token"), Subject: q.Get("subject"), EffectsOnly: effects}
	writeJSON(w, http.StatusOK, ledgerAnswer{Entries: s.ledger.Entries(f)})
}

func (s *Server) serveAddFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	err := decodeBody(w, r, &f)
	if err == nil {
		if err = s.faults.add(f); err != nil {
			err = domain.Errorf(domain.CodeValidation, "%v", err)
		}
	}
	if err != nil {
		writeProblem(w, err)
		return
	}
	s.log.Info("fault added", "kind", f.Kind, "action", f.Action, "times", f.Times)
	w.WriteHeader(http.StatusNoContent)
}

type ledgerAnswer struct {
	Entries []Entry `json:"entries"`
}

type heldAnswer struct {
	Held []HeldCall `json:"held"`
}

type releaseAnswer struct {
	Released int `json:"released"`
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v); err != nil {
		return domain.Errorf(domain.CodeValidation, "the request body is not the expected JSON")
	}
	return nil
}

// writeProblem answers err with its status and returns the status. Only
// the client-safe message of a domain error is written, never its cause.
func writeProblem(w http.ResponseWriter, err error) int {
	p := problem{Code: domain.CodeInternal, Message: "internal error"}
	var de *domain.Error
	if errors.As(err, &de) {
		p = problem{Code: de.Code, Message: de.Message, ResourceID: de.ResourceID}
	}
	status := errorStatus(err)
	if de != nil && de.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(de.RetryAfter)))
	}
	writeJSON(w, status, p)
	return status
}

// errorStatus is the status writeProblem answers err with.
func errorStatus(err error) int { return statusOf(domain.ErrorCode(err)) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the caller may be gone; nothing to do
}

// platformJournal keeps the platform's effects in the ledger.
type platformJournal struct{ ledger *Ledger }

func (j platformJournal) Record(e platformsim.Effect) error {
	kind := KindVerify
	if e.Kind == platformsim.CallCreateListing {
		kind = KindListing
	}
	return j.ledger.appendData(kind, e.Token, e)
}

// aiJournal keeps the AI provider's charges in the ledger.
type aiJournal struct{ ledger *Ledger }

func (j aiJournal) Record(c aisim.Charge) error { return j.ledger.appendData(KindGenerate, c.Token, c) }
