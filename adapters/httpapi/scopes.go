package httpapi

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/oncehq/once/domain"
	"github.com/oncehq/once/domain/model"
)

// scopeMeta is where an operation's Metadata holds the one model.Scope
// its caller needs (needs); requireScope reads it on every request.
const scopeMeta = "once.scope"

// ScopeExtension names the operation's scope in the spec, so clients and
// generated documentation can read it.
const ScopeExtension = "x-once-scope"

// needs declares the one scope a caller must hold to call op: a read
// scope for a GET, the family's write scope for anything else. Every
// authenticated route is registered through it (a test walks the spec);
// the scope reaches the spec (documentScopes) and requireScope enforces it.
// A new route is one wrap: huma.Register(api, needs(model.ScopeKeysWrite,
// huma.Operation{...}), handler); registerRead and registerList take the
// scope as a parameter.
func needs(scope model.Scope, op huma.Operation) huma.Operation {
	op.Metadata = maps.Clone(op.Metadata)
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata[scopeMeta] = scope
	return op
}

// ScopeOwnToken is what the spec and the scopes table show for a route
// that acts only on the caller's own credential (logging out its own
// token): it needs no scope, since every caller may always drop its own
// access, and refusing it would keep a leaked token alive.
const ScopeOwnToken model.Scope = "none (own token)"

// needsOnlyItsToken declares that op acts only on the caller's own token,
// so any authenticated caller may call it (ScopeOwnToken).
func needsOnlyItsToken(op huma.Operation) huma.Operation {
	return needs(ScopeOwnToken, op)
}

// scopeOf is the scope op declares, false when it declares none.
func scopeOf(op *huma.Operation) (model.Scope, bool) {
	s, ok := op.Metadata[scopeMeta].(model.Scope)
	return s, ok && (s.Valid() || s == ScopeOwnToken)
}

// requireScope refuses, after authentication and before the workspace's
// limits and anything that reads the body, a caller whose principal does
// not allow the route's scope: a refused caller costs nothing but the
// token check. An API key lacking it gets 403 INSUFFICIENT_SCOPE; a user
// whose role lacks it 403 FORBIDDEN, as before scopes (the admin-only
// routes). A secured route without a scope is refused: a bug, never an
// open door.
func requireScope(api huma.API) func(huma.Context, func(huma.Context)) {
	return func(ctx huma.Context, next func(huma.Context)) {
		op, p, ok := securedCall(ctx)
		if !ok {
			next(ctx)
			return
		}
		scope, ok := scopeOf(op)
		if !ok {
			writeDomainError(api, ctx, domain.Errorf(domain.CodeInternal, "route %s %s declares no scope", op.Method, op.Path))
			return
		}
		if scope == ScopeOwnToken {
			next(ctx)
			return
		}
		if err := p.Require(scope); err != nil {
			writeDomainError(api, ctx, err)
			return
		}
		next(ctx)
	}
}

// documentScopes shows each operation's scope in the spec: the
// ScopeExtension, and a paragraph of its description (before the
// idempotency rules, which end it).
func documentScopes(api huma.API) {
	for _, item := range api.OpenAPI().Paths {
		for _, op := range operationsOf(item) {
			if op == nil {
				continue
			}
			scope, ok := scopeOf(op)
			if !ok {
				continue // the spec walk fails on a secured one
			}
			if op.Extensions == nil {
				op.Extensions = map[string]any{}
			}
			op.Extensions[ScopeExtension] = string(scope)
			body, rules := op.Description, ""
			if b, ok := strings.CutSuffix(body, idempotencyRules); ok {
				body, rules = b, idempotencyRules
			}
			if body != "" {
				body += "\n\n"
			}
			op.Description = body + scopeParagraph(scope) + rules
		}
	}
}

// scopeParagraph says who may call a route that needs scope.
func scopeParagraph(scope model.Scope) string {
	if scope == ScopeOwnToken {
		return "**Scope.** None: any caller may act on its own token."
	}
	var who []string
	for _, r := range roles {
		if roleHas(r, scope) {
			who = append(who, string(r)+"s")
		}
	}
	return fmt.Sprintf("**Scope.** `%s`: %s have it; an API key only if created with it.", scope, strings.Join(who, " and "))
}

// roles are the roles of members, in the order the docs show them.
var roles = []model.Role{model.RoleAdmin, model.RoleMember}

// roleHas reports whether the users of role r have scope.
func roleHas(r model.Role, scope model.Scope) bool {
	return scope == ScopeOwnToken || slices.Contains(model.RoleScopes(r), scope)
}

// RouteScope is one route of the API and the scope it needs.
type RouteScope struct {
	OperationID, Method, Path string
	Scope                     model.Scope
}

// RouteScopes lists api's authenticated routes with their scopes, by
// path, then method.
func RouteScopes(api huma.API) []RouteScope {
	var out []RouteScope
	for _, item := range api.OpenAPI().Paths {
		for _, op := range operationsOf(item) {
			if op == nil || len(op.Security) == 0 {
				continue
			}
			scope, _ := scopeOf(op)
			out = append(out, RouteScope{OperationID: op.OperationID, Method: op.Method, Path: op.Path, Scope: scope})
		}
	}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	slices.SortFunc(out, func(a, b RouteScope) int {
		if d := strings.Compare(a.Path, b.Path); d != 0 {
			return d
		}
		return slices.Index(methods, a.Method) - slices.Index(methods, b.Method)
	})
	return out
}

// ScopeTableMarkdown is the scopes table of docs/api.md: every
// authenticated route, the scope it needs and whether an admin and a
// member have it, from the routes as registered (`once scopes --markdown`
// prints it; a test holds the page to it).
func ScopeTableMarkdown() string {
	var b strings.Builder
	b.WriteString("| route | operation | scope |")
	for _, r := range roles {
		fmt.Fprintf(&b, " %s |", r)
	}
	b.WriteString("\n|---|---|---|" + strings.Repeat(":-:|", len(roles)) + "\n")
	for _, route := range RouteScopes(NewAPI(http.NewServeMux(), Deps{})) {
		fmt.Fprintf(&b, "| `%s %s` | `%s` | `%s` |", route.Method, route.Path, route.OperationID, route.Scope)
		for _, r := range roles {
			fmt.Fprintf(&b, " %s |", yesNo(roleHas(r, route.Scope)))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
