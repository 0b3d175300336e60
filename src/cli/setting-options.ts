/**
 * A command's flags and their --help, made from the settings it takes (settings.ts), and the flags given read
 * back as a source for config.ts: each under its setting's name, with the flag it was given by for the
 * refusals. Commander parses; the checks are the configuration's, so a flag, a variable and a key in the
 * file are refused in the same words.
 */
import { Option, type Command } from 'commander';
import { SETTINGS, fileKey, flagName, sectionOf, settingsOf, type SettingDeclaration, type SettingsCommand } from '../settings.js';

/** The default as --help gives it: a number with its unit, or words after a colon; none for a switch or a list. */
function shownDefault(declaration: SettingDeclaration): string | undefined {
  if (declaration.kind.flagShape !== 'value') return undefined;
  const value = declaration.default;
  const shown = declaration.shownDefault ?? (typeof value === 'number' || typeof value === 'string' ? value : undefined);
  if (shown === undefined) return undefined;
  return typeof shown === 'number' ? `default ${shown}${declaration.unit ? ` ${declaration.unit}` : ''}` : `default: ${shown}`;
}

/** One setting's line in a command's --help: what it does, its default, its variable, its key in the file. */
export function settingHelp(declaration: SettingDeclaration, command: SettingsCommand): string {
  const shown = shownDefault(declaration);
  return [
    `${declaration.help[command]}${shown ? ` (${shown})` : ''}`,
    ...(declaration.env ? [`$${declaration.env}`] : []),
    `"${fileKey(declaration)}" in the config file`,
  ].join('; ');
}

/** Adds a flag for each setting `command` takes that has one, in the table's order. */
export function addSettingOptions(program: Command, command: SettingsCommand, table: readonly SettingDeclaration[] = SETTINGS): Command {
  for (const declaration of settingsOf(command, table)) {
    if (!declaration.flag) continue;
    const option = new Option(declaration.flag, settingHelp(declaration, command));
    if (declaration.kind.flagShape === 'list') option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
    program.addOption(option);
  }
  return program;
}

/**
 * The flags given on the line, as a source: each setting's value under its name (a value's text read as the
 * setting's kind reads a variable's, so the check sees what was meant), and the flag it came by. A flag not
 * given says nothing, whatever commander's own default for it (`--no-examples` alone would say true).
 */
export function settingFlags(
  program: Command, command: SettingsCommand, table: readonly SettingDeclaration[] = SETTINGS,
): { input: Record<string, unknown>; names: Record<string, string> } {
  const given = program.opts();
  const input: Record<string, unknown> = {};
  const names: Record<string, string> = {};
  for (const declaration of settingsOf(command, table)) {
    if (!declaration.flag) continue;
    names[declaration.name] = flagName(declaration)!;
    // Commander's name for the flag, which camel-cases each word (`--remote-answer-mib` is `remoteAnswerMib`).
    const attribute = new Option(declaration.flag).attributeName();
    if (program.getOptionValueSource(attribute) !== 'cli') continue;
    const value = given[attribute] as unknown;
    input[declaration.name] = declaration.kind.flagShape === 'value' ? declaration.kind.fromText(value as string) : value;
  }
  return { input, names };
}

/** The file's keys a command reads, for its --config help: its top-level keys, then each section's. */
export function fileKeysRead(command: SettingsCommand, table: readonly SettingDeclaration[] = SETTINGS): string {
  const ours = settingsOf(command, table);
  const top = ours.filter((declaration) => sectionOf(declaration) === 'top').map((declaration) => declaration.name);
  const sections = [...new Set(ours.map(sectionOf).filter((section) => section !== 'top'))].map((section) =>
    `its "${section}" object (${ours.filter((declaration) => sectionOf(declaration) === section).map((declaration) => declaration.name).join(', ')})`);
  return [top.length > 0 ? `its ${top.join(', ')}` : undefined, ...sections].filter(Boolean).join(' and ');
}
