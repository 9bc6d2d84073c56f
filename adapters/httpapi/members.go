package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/oncehq/once/domain/model"
	"github.com/oncehq/once/ports"
)

// Member is a user's membership of the workspace.
type Member struct {
	UserID    uuid.UUID `json:"user_id" format:"uuid" doc:"The user's id in your identity provider"`
	Role      string    `json:"role" enum:"admin,member" doc:"admin: manages members and dead letters; member: everything else"`
	CreatedAt time.Time `json:"created_at"`
}

// MemberList is one page of members, in user id order.
type MemberList struct {
	Items   []Member `json:"items" doc:"Members in user id order"`
	HasMore bool     `json:"has_more" doc:"More members follow: ask again with starting_after = the user_id of the last item"`
}

// ListMembersInput pages the members like every list, with the user id as
// the cursor (a member has no id of its own).
type ListMembersInput struct {
	Limit         int       `query:"limit" minimum:"1" maximum:"100" default:"20" doc:"Page size"`
	StartingAfter uuid.UUID `query:"starting_after" format:"uuid" doc:"Cursor: the user_id of the last member of the previous page"`
}

type AddMemberRequest struct {
	UserID uuid.UUID `json:"user_id" format:"uuid" doc:"The user's id in your identity provider"`
	Role   string    `json:"role" enum:"admin,member"`
}

type AddMemberInput struct {
	Body AddMemberRequest
}

type MemberOutput struct {
	Body Member
}

type MemberListOutput struct {
	Body MemberList
}

type RemoveMemberInput struct {
	UserID uuid.UUID `path:"user_id" format:"uuid" doc:"The member's user id"`
}

type NoContent struct{}

func toMember(m model.Member) Member {
	return Member{UserID: m.UserID, Role: string(m.Role), CreatedAt: m.CreatedAt}
}

func (h *handlers) registerMembers(api huma.API) {
	huma.Register(api, needs(model.ScopeMembersRead, huma.Operation{
		OperationID: "listMembers", Method: http.MethodGet, Path: "/v1/members",
		Summary:     "List the workspace's members",
		Description: "Workspace admins only. In user id order; pass the user_id of the last item as starting_after for the next page while has_more is true.",
		Tags:        []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 422, 500, 503},
	}), h.listMembers)
	huma.Register(api, needs(model.ScopeMembersWrite, huma.Operation{
		OperationID: "addMember", Method: http.MethodPost, Path: "/v1/members", DefaultStatus: http.StatusCreated,
		MaxBodyBytes: h.deps.MaxBodyBytes,
		Summary:      "Add a member",
		Description:  "Workspace admins only. A user who is already a member gets 409 CONFLICT with the user id in resource_id; retrying an add is therefore safe.",
		Tags:         []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 409, 422, 500, 503},
	}), h.addMember)
	huma.Register(api, needs(model.ScopeMembersWrite, huma.Operation{
		OperationID: "removeMember", Method: http.MethodDelete, Path: "/v1/members/{user_id}", DefaultStatus: http.StatusNoContent,
		Summary:     "Remove a member",
		Description: "Workspace admins only. The last admin cannot be removed (409 INVALID_STATE). A member already removed gets 404.",
		Tags:        []string{"workspace"}, Security: bearer, Errors: []int{401, 403, 404, 409, 500, 503},
	}), h.removeMember)
}

func (h *handlers) listMembers(ctx context.Context, in *ListMembersInput) (*MemberListOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	page, err := h.deps.Workspaces.ListMembers(ctx, p, ports.ListQuery{Limit: in.Limit, StartingAfter: in.StartingAfter})
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	out := &MemberListOutput{Body: MemberList{Items: make([]Member, 0, len(page.Items)), HasMore: page.HasMore}}
	for _, m := range page.Items {
		out.Body.Items = append(out.Body.Items, toMember(m))
	}
	return out, nil
}

func (h *handlers) addMember(ctx context.Context, in *AddMemberInput) (*MemberOutput, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	m, err := h.deps.Workspaces.AddMember(ctx, p, in.Body.UserID, model.Role(in.Body.Role))
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	return &MemberOutput{Body: toMember(m)}, nil
}

func (h *handlers) removeMember(ctx context.Context, in *RemoveMemberInput) (*NoContent, error) {
	p, err := principalFrom(ctx)
	if err != nil {
		return nil, toProblem(ctx, err)
	}
	if err := h.deps.Workspaces.RemoveMember(ctx, p, in.UserID); err != nil {
		return nil, toProblem(ctx, err)
	}
	return &NoContent{}, nil
}
