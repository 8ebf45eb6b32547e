package httpd

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A nil *actors.Error returned where the result is an error is a non-nil
// error (a "typed nil"): the handler would answer an error that is not
// there. So no function of this package, or of its rooms httpd/edge,
// httpd/forward, httpd/site and httpd/admin, returns an expression of static type *actors.Error as an
// error, except the calls that never give nil (neverNil); an
// *actors.Error becomes an error only through a variable checked against
// nil, or one of those.
var neverNil = map[string]bool{"Errorf": true, "storeError": true, "specError": true, "required": true,
	"ownerRateLimited": true, "rateLimited": true, "upstreamUnavailable": true}

func TestNoTypedNilErrorReturns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("type-checks the package")
	}
	cfg := &packages.Config{Mode: packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax | packages.NeedName, Tests: false}
	rooms := []string{".", "./edge", "./forward", "./site", "./admin"}
	pkgs, err := packages.Load(cfg, rooms...)
	if err != nil || len(pkgs) != len(rooms) {
		t.Fatalf("load: %v (%d packages)", err, len(pkgs))
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("load %s: %v", p.PkgPath, p.Errors)
		}
		noTypedNilErrorReturns(t, p)
	}
}

// noTypedNilErrorReturns reports each *actors.Error that p's functions
// make an error where it may be nil.
func noTypedNilErrorReturns(t *testing.T, p *packages.Package) {
	errorType := types.Universe.Lookup("error").Type()
	for _, file := range p.Syntax {
		ast.Inspect(file, func(n ast.Node) bool {
			var sig *types.Signature
			var body *ast.BlockStmt
			switch fn := n.(type) {
			case *ast.FuncDecl:
				if fn.Body == nil {
					return true
				}
				sig, body = p.TypesInfo.Defs[fn.Name].Type().(*types.Signature), fn.Body
			case *ast.FuncLit:
				sig, body = p.TypesInfo.Types[fn].Type.(*types.Signature), fn.Body
			default:
				return true
			}
			// The expressions an if statement has checked against nil, with
			// the block where they are known not to be.
			type checked struct {
				expr       string
				start, end token.Pos
			}
			var nonNil []checked
			ast.Inspect(body, func(m ast.Node) bool {
				if ifs, isIf := m.(*ast.IfStmt); isIf {
					for _, e := range nilChecks(ifs.Cond) {
						nonNil = append(nonNil, checked{types.ExprString(e), ifs.Body.Pos(), ifs.Body.End()})
					}
				}
				return true
			})
			ast.Inspect(body, func(m ast.Node) bool {
				if _, nested := m.(*ast.FuncLit); nested && m != n {
					return false // checked with its own signature
				}
				// Pairs of (the type an expression becomes, the expression):
				// return values and assignments.
				var pairs []struct {
					to types.Type
					r  ast.Expr
				}
				switch st := m.(type) {
				case *ast.ReturnStmt:
					if len(st.Results) == sig.Results().Len() {
						for i, r := range st.Results {
							pairs = append(pairs, struct {
								to types.Type
								r  ast.Expr
							}{sig.Results().At(i).Type(), r})
						}
					}
				case *ast.AssignStmt:
					if len(st.Lhs) == len(st.Rhs) {
						for i, l := range st.Lhs {
							if tv, ok := p.TypesInfo.Types[l]; ok {
								pairs = append(pairs, struct {
									to types.Type
									r  ast.Expr
								}{tv.Type, st.Rhs[i]})
							}
						}
					} else if len(st.Rhs) == 1 {
						// x, err = f(): f's results land in typed variables.
						if tuple, ok := p.TypesInfo.Types[st.Rhs[0]].Type.(*types.Tuple); ok {
							for i, l := range st.Lhs {
								tv, ok := p.TypesInfo.Types[l]
								if !ok || i >= tuple.Len() || !types.Identical(tv.Type, errorType) || !isSpecErrorPtr(tuple.At(i).Type()) {
									continue
								}
								t.Errorf("%s: a *actors.Error result assigned to an error (nil would be a non-nil error)", p.Fset.Position(l.Pos()))
							}
						}
					}
				}
				for _, pair := range pairs {
					r := pair.r
					if !types.Identical(pair.to, errorType) {
						continue
					}
					if !isSpecErrorPtr(p.TypesInfo.Types[r].Type) {
						continue
					}
					if call, isCall := r.(*ast.CallExpr); isCall && neverNil[calleeName(call)] {
						continue
					}
					if _, isAddr := r.(*ast.UnaryExpr); isAddr {
						continue // &actors.Error{...}
					}
					if id, isID := r.(*ast.Ident); isID {
						if v, isVar := p.TypesInfo.Uses[id].(*types.Var); isVar && v.Parent() == p.Types.Scope() {
							continue // a package-level error, set once and never nil
						}
					}
					if slices.ContainsFunc(nonNil, func(c checked) bool {
						return c.expr == types.ExprString(r) && r.Pos() >= c.start && r.Pos() < c.end
					}) {
						continue // returned where an if has found it not nil
					}
					t.Errorf("%s: a *actors.Error made an error (nil would be a non-nil error)", p.Fset.Position(r.Pos()))
				}
				return true
			})
			return true
		})
	}
}

// isSpecErrorPtr reports whether t is *actors.Error.
func isSpecErrorPtr(t types.Type) bool {
	ptr, isPtr := t.(*types.Pointer)
	if !isPtr {
		return false
	}
	named, isNamed := ptr.Elem().(*types.Named)
	return isNamed && named.Obj().Name() == "Error"
}

// nilChecks returns the expressions cond requires to be non-nil: X in
// "X != nil", and in each operand of an &&.
func nilChecks(cond ast.Expr) []ast.Expr {
	b, isBin := cond.(*ast.BinaryExpr)
	switch {
	case !isBin:
		return nil
	case b.Op == token.LAND:
		return append(nilChecks(b.X), nilChecks(b.Y)...)
	case b.Op == token.NEQ:
		if id, isID := b.Y.(*ast.Ident); isID && id.Name == "nil" {
			return []ast.Expr{b.X}
		}
	}
	return nil
}

func calleeName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}
