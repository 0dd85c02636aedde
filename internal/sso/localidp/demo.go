package localidp

// Person is one of the demo provider's users.
type Person struct {
	Username, Email, Name, Group string
}

// DemoPeople are the users the demo provider signs in (cmd/ssoprovider and
// the console's -oidc-demo): one in each group DemoGroupRoles maps.
var DemoPeople = []Person{
	{"sam", "sam@sso.demo.countersign.test", "Sam Support", "support"},
	{"lee", "lee@sso.demo.countersign.test", "Lee Lead", "leads"},
	{"ida", "ida@sso.demo.countersign.test", "Ida Admin", "it"},
}

// DemoGroupRoles maps DemoPeople's groups to console roles, in the form
// of -oidc-group-roles.
const DemoGroupRoles = "support=agent,leads=manager,it=admin"

// DemoClientID is the console's client id at the demo provider.
const DemoClientID = "countersign"

// AddDemoPeople adds DemoPeople.
func (o *OP) AddDemoPeople() {
	for _, p := range DemoPeople {
		o.AddUser(p.Username, p.Email, p.Name, p.Group)
	}
}
