namespace Nats.Server.Mappings;

/// <summary>A mapping rejected when it is added; the message is Go's error text.</summary>
internal sealed class MappingException(string message) : Exception(message);

/// <summary>The error texts of Go 2.9.10 (server/errors.go) for mappings.</summary>
internal static class MappingErrors
{
    public const string BadSubject = "invalid subject";
    public const string InvalidDestination = "invalid mapping destination";
    public const string InvalidDestinationSubject = InvalidDestination + ": invalid subject";
    public const string NotUsingAllWildcards = InvalidDestination + ": not using all of the token wildcard(s)";
    public const string UnknownFunction = InvalidDestination + ": unknown function";
    public const string WildcardIndexOutOfRange = InvalidDestination + ": wildcard index out of range";
    public const string NotEnoughArguments = InvalidDestination + ": not enough arguments passed to the function";
    public const string InvalidArgument = InvalidDestination + ": function argument is invalid or in the wrong format";
    public const string TooManyArguments = InvalidDestination + ": too many arguments passed to the function";

    /// <summary>Go's mappingDestinationErr: "reason in token".</summary>
    public static MappingException InToken(string reason, string token) => new($"{reason} in {token}");
}
