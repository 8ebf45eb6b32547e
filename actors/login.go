package actors

// A login is how a person names their account at sign-in: an e-mail
// address or a user name, kept as the owner typed it and compared without
// regard to case. Logins are ASCII only, so that folding case is one
// simple rule every replica applies alike (Unicode case folding changes
// between versions and maps some letters onto others, such as the Kelvin
// sign onto "k"), and so that no two logins look the same but differ.
const (
	loginBytesMin = 3
	loginBytesMax = 254 // the longest e-mail address a mail server accepts
)

// errLoginTaken refuses a login another account holds. It never says which.
var errLoginTaken = Errorf(CodeConflict, "that login is taken")

// ErrLoginTaken is errLoginTaken for a sharded cluster, whose meta group
// refuses a login held by an account of another group.
var ErrLoginTaken = errLoginTaken

// ValidateLogin checks a login's shape: 3 to 254 bytes of ASCII letters,
// digits and ". _ - + @", starting with a letter or a digit.
func ValidateLogin(login string) *Error {
	if len(login) < loginBytesMin || len(login) > loginBytesMax || !isLoginStart(login[0]) {
		return errLoginShape
	}
	for i := 1; i < len(login); i++ {
		if !isLoginStart(login[i]) && !isLoginMark(login[i]) {
			return errLoginShape
		}
	}
	return nil
}

var errLoginShape = Errorf(CodeValidation,
	"login must be %d to %d characters of ASCII letters, digits and . _ - + @, starting with a letter or a digit", loginBytesMin, loginBytesMax)

func isLoginStart(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

func isLoginMark(b byte) bool { return b == '.' || b == '_' || b == '-' || b == '+' || b == '@' }

// FoldLogin returns the form logins are compared in: ASCII letters in
// lower case. Only ASCII letters change, so a login that is not valid can
// never fold onto one that is.
func FoldLogin(login string) string {
	folded := []byte(login)
	for i, b := range folded {
		if 'A' <= b && b <= 'Z' {
			folded[i] = b + ('a' - 'A')
		}
	}
	return string(folded)
}

// SetLogin sets or changes the account's login. The edge checked the
// owner's current password against ExpectedPasswordHash, so a stolen
// session alone cannot change how the account signs in; a password change
// that commits first makes this fail.
type SetLogin struct {
	Login                string `json:"login"`
	ExpectedPasswordHash string `json:"expected_password_hash"`

	// loginTaken is whether another account holds the login at this
	// command's place in the log. The registry sets it from its login
	// index just before applying (MarkLoginTaken); it is never encoded.
	loginTaken bool
}

func (*SetLogin) Kind() Kind { return KindSetLogin }

func (p *SetLogin) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if p.ExpectedPasswordHash != a.PasswordHash {
		return fail(errWrongPassword)
	}
	if err := ValidateLogin(p.Login); err != nil {
		return fail(err)
	}
	if p.loginTaken {
		return fail(errLoginTaken)
	}
	if a.Login != p.Login {
		a.Login = p.Login
		a.nextVersion()
	}
	return ok(LoginView{Login: a.Login})
}

// LoginClaim returns the login a command gives its account, and whether
// the command claims one: an account creation with a login, or SetLogin.
// Logins are unique across accounts, which no one account's rule can
// check, so the registry (package actors/registry) keeps an index of the
// logins in use, cuts its batches before each claim, and tells the claim
// whether its login is taken (MarkLoginTaken) just before applying it.
func LoginClaim(c *Command) (login string, claims bool) {
	switch p := c.Payload.(type) {
	case *CreateAccount:
		return p.Login, p.Login != ""
	case *SetLogin:
		return p.Login, true
	}
	return "", false
}

// MarkLoginTaken records on a command that claims a login (LoginClaim)
// whether another account holds that login at the command's place in the
// log; the rule then refuses it with ErrLoginTaken. It leaves any other
// command alone. The mark is never encoded.
func MarkLoginTaken(c *Command, taken bool) {
	switch p := c.Payload.(type) {
	case *CreateAccount:
		p.loginTaken = taken
	case *SetLogin:
		p.loginTaken = taken
	}
}

// LoginView is the body of a login change.
type LoginView struct {
	Login string `json:"login"`
}

// AccountQuery is the owner's GET /owner/v1/account: the account's id,
// login and plan.
type AccountQuery struct{}

// AccountView is the body of GET /owner/v1/account. Login is empty for an
// account that has none yet.
type AccountView struct {
	AccountID string `json:"account_id"`
	Login     string `json:"login"`
	Plan      Plan   `json:"plan"`
}

func (AccountQuery) answer(a *Account, who Principal, _ Level, _ int64) (AccountView, *Error) {
	if who.isAgent() {
		return AccountView{}, Errorf(CodeForbidden, "API keys cannot manage the account")
	}
	return AccountView{AccountID: a.ID, Login: a.Login, Plan: a.Plan}, nil
}
