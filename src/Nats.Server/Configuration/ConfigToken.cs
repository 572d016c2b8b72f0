namespace Nats.Server.Configuration;

internal enum ConfigTokenKind
{
    Error,
    Eof,
    Key,
    String,
    Bool,
    Integer,
    Float,
    Datetime,
    ArrayStart,
    ArrayEnd,
    MapStart,
    MapEnd,
    Variable,
    Include,
}

/// <summary>One lexical item. Line is 1-based; Column follows the Go server's quirk
/// (0-based on the first line, 1-based after) so error positions read the same as Go's.</summary>
internal readonly record struct ConfigToken(ConfigTokenKind Kind, string Text, int Line, int Column);
