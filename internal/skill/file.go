package skill

// FileName is the file that makes a folder a skill version.
const FileName = "SKILL.md"
