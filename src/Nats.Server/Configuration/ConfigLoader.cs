namespace Nats.Server.Configuration;

/// <summary>Reads a configuration file and applies it to options (the file half of nats-server's ConfigureOptions).</summary>
internal static class ConfigLoader
{
    /// <summary>
    /// Parses <paramref name="path"/> and binds it onto <paramref name="options"/>. Syntax errors, include
    /// failures and unreadable files throw <see cref="ConfigurationException"/>; binding problems are returned
    /// so the caller can decide (Go refuses errors always, and warnings only when testing with -t).
    /// </summary>
    public static ConfigBindResult Load(ServerOptions options, string path)
    {
        options.ConfigFile = path;
        var config = ConfigParser.ParseFile(path);
        return ConfigBinder.Bind(options, config);
    }

    /// <summary>Parses and binds configuration text (tests, embedded configs); throws on any error.</summary>
    public static ServerOptions FromText(string text, string file = "")
    {
        var options = new ServerOptions();
        var result = ConfigBinder.Bind(options, ConfigParser.Parse(text, file));
        if (result.Errors.Count > 0)
        {
            throw new ConfigurationException(result.Errors, result.Warnings);
        }
        return options;
    }
}
