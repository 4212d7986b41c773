import ArgumentParser
import CountersignServer
@main struct Main { static func main() {} }
