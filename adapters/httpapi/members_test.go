package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oncehq/once/adapters/httpapi"
	"github.com/oncehq/once/testsupport/apitest"
)

// TestAdminsManageMembers: an admin adds, lists and removes members; a
// member may not; the last admin stays.
func TestAdminsManageMembers(t *testing.T) {
	s := apitest.Memory(t)
	user := uuid.New()

	res := s.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": user, "role": "member"}, nil)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	var added httpapi.Member
	res.JSON(t, &added)
	assert.Equal(t, user, added.UserID)
	assert.Equal(t, "member", added.Role)

	res = s.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": user, "role": "admin"}, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	var conflict httpapi.Problem
	res.JSON(t, &conflict)
	assert.Equal(t, "CONFLICT", conflict.Code)
	assert.Equal(t, user.String(), conflict.ResourceID, "the conflict names the member")

	var list httpapi.MemberList
	res = s.Do(t, http.MethodGet, "/v1/members", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.JSON(t, &list)
	var users []uuid.UUID
	for _, m := range list.Items {
		users = append(users, m.UserID)
	}
	assert.ElementsMatch(t, []uuid.UUID{s.User, user}, users)
	assert.False(t, list.HasMore)

	// Paged like every list: one member a page, the user id the cursor.
	res = s.Do(t, http.MethodGet, "/v1/members?limit=1", nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var first httpapi.MemberList
	res.JSON(t, &first)
	require.Len(t, first.Items, 1)
	assert.True(t, first.HasMore)
	res = s.Do(t, http.MethodGet, "/v1/members?limit=1&starting_after="+first.Items[0].UserID.String(), nil, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var second httpapi.MemberList
	res.JSON(t, &second)
	require.Len(t, second.Items, 1)
	assert.False(t, second.HasMore)
	assert.ElementsMatch(t, users, []uuid.UUID{first.Items[0].UserID, second.Items[0].UserID})

	// The new member is not an admin: members are not theirs to manage.
	asMember := map[string]string{"Authorization": "Bearer " + s.TokenFor(t, s.Workspace, user)}
	res = s.Do(t, http.MethodGet, "/v1/members", nil, asMember)
	assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	res = s.Do(t, http.MethodDelete, "/v1/members/"+s.User.String(), nil, asMember)
	assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)

	res = s.Do(t, http.MethodDelete, "/v1/members/"+user.String(), nil, nil)
	require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
	res = s.Do(t, http.MethodDelete, "/v1/members/"+user.String(), nil, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	// Removed: the user's token no longer opens the workspace.
	res = s.Do(t, http.MethodGet, "/v1/operations", nil, asMember)
	assert.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)

	res = s.Do(t, http.MethodDelete, "/v1/members/"+s.User.String(), nil, nil)
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	assert.Equal(t, "INVALID_STATE", res.Problem(t).Code, "the last admin stays")

	res = s.Do(t, http.MethodPost, "/v1/members", map[string]any{"user_id": uuid.Nil, "role": "member"}, nil)
	assert.Equal(t, http.StatusUnprocessableEntity, res.Status, "%s", res.Body)
}
