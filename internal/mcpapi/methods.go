package mcpapi

// Method names of the skills extension and of the resource methods it
// builds on.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodResourcesList = "resources/list"
	methodResourcesRead = "resources/read"
	methodTemplatesList = "resources/templates/list"
	methodDirectoryRead = "resources/directory/read"
	methodOther         = "other"
	skillsExtension     = "io.modelcontextprotocol/skills"
	versionsMetaKey     = "io.github.skillserver/versions"
)

// Results the metrics give a message.
const (
	resultOK       = "ok"
	resultError    = "error"
	resultUnserved = "unserved"
)

// Methods is every method the metrics name; any other is "other".
var Methods = []string{
	"initialize", "notifications/initialized", "server/discover", "ping",
	methodSkillsList, methodSkillsGet,
	methodResourcesList, methodResourcesRead, methodTemplatesList, methodDirectoryRead,
	methodOther,
}

// metricMethod is m as the metrics name it.
func metricMethod(m string) string {
	for _, k := range Methods {
		if k == m {
			return m
		}
	}
	return methodOther
}
