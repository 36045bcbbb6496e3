/**
 * A user id, wherever one comes from (a static token's user, an admin list, a JWT's `sub`):
 * 1-128 letters, digits or `_.@|-` (`|` for identity providers' ids such as `auth0|…`). No spaces, controls or bidi overrides, so an id reads the
 * same in an audit line, a listing and the database.
 */
export const USER_ID = /^[A-Za-z0-9_.@|-]{1,128}$/
