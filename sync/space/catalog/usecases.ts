import type { Json, JsonObject } from '../../crdt/ops.ts'
import type { PartCreateBody } from '../types/index.ts'

/**
 * The catalog's usecases: well-known `system:` bundles a space can set up in one call. Every
 * bundle here is derived (its root id is a pure function of the space and the bundle id) and
 * declares its type on its root. The set is fixed by the release, so every device agrees on
 * it. docs/bundles.md lists what each one installs.
 */

export interface CatalogProperty {
  name: string
  kind: 'string' | 'number' | 'boolean' | 'array' | 'object' | 'datetime'
  xKey: string
  description?: string
  xFormat?: JsonObject
  /** Relation target: the type of another catalog bundle, filled into `xFormat.relation.targetTypes` at setup. */
  relationTo?: string
}

export interface CatalogChild {
  seed: string
  types: string[]
  name: string
}

export interface CatalogBundle {
  id: string
  name: string
  description: string
  xKey: string
  hidden?: boolean
  layout?: string
  weight?: number
  properties?: CatalogProperty[]
  parts?: PartCreateBody[]
  /** The root carries its own type, so it holds the type's datasets itself (see InstallOptions). */
  rootCarriesOwnType?: boolean
  /** Deterministic children created at setup (`POST .../children` with the same seed finds them). */
  children?: CatalogChild[]
}

export interface Usecase {
  id: string
  name: string
  description: string
  /** Usecases set up first, in this order. */
  dependsOn: string[]
  bundles: CatalogBundle[]
}

const option = (name: string, pos: number, color?: string): Json => (color ? { name, pos, color } : { name, pos })

export const USECASES: readonly Usecase[] = [
  {
    id: 'general-chat',
    name: 'General chat',
    description: "One conversation for the whole space, held by the space's general-chat root.",
    dependsOn: [],
    bundles: [
      {
        id: 'system:general-chat/v1',
        name: 'General chat',
        description: 'Hidden root that is its own chat type: its chat part declares the shared chat_messages dataset.',
        xKey: 'system:general-chat',
        hidden: true,
        parts: [{ key: 'chat', name: 'Chat', uses: ['chat'], datasets: [{ module: 'chat' }] }],
        rootCarriesOwnType: true,
      },
    ],
  },
  {
    id: 'task-tracker',
    name: 'Task tracker',
    description: 'A Task type (status, priority, due date, assignee) and a task board.',
    dependsOn: [],
    bundles: [
      {
        id: 'system:task-tracker/v1',
        name: 'Task',
        description: 'The root is the Task type; tasks are objects carrying it. The board is the child with seed "board".',
        xKey: 'system:task',
        layout: 'board',
        properties: [
          {
            name: 'Status',
            kind: 'string',
            xKey: 'status',
            xFormat: { type: 'choice', options: { todo: option('To do', 1, 'grey'), doing: option('In progress', 2, 'blue'), done: option('Done', 3, 'green') } },
          },
          {
            name: 'Priority',
            kind: 'string',
            xKey: 'priority',
            xFormat: { type: 'choice', options: { low: option('Low', 1), medium: option('Medium', 2), high: option('High', 3), urgent: option('Urgent', 4, 'red') } },
          },
          { name: 'Due', kind: 'datetime', xKey: 'due', xFormat: { type: 'date' } },
          { name: 'Assignee', kind: 'string', xKey: 'assignee', description: 'identity of the member the task is assigned to', xFormat: { type: 'text' } },
        ],
        children: [{ seed: 'board', types: ['dataview'], name: 'Task board' }],
      },
    ],
  },
  {
    id: 'standup',
    name: 'Daily standup',
    description: 'Standup notes linking the tasks discussed; needs the task tracker and the general chat.',
    dependsOn: ['general-chat', 'task-tracker'],
    bundles: [
      {
        id: 'system:standup/v1',
        name: 'Standup',
        description: 'The root is the Standup type, with a notes editor part and links to tasks.',
        xKey: 'system:standup',
        properties: [
          { name: 'Date', kind: 'datetime', xKey: 'date', xFormat: { type: 'date' } },
          { name: 'Done', kind: 'string', xKey: 'done', xFormat: { type: 'text' } },
          { name: 'Next', kind: 'string', xKey: 'next', xFormat: { type: 'text' } },
          { name: 'Blockers', kind: 'string', xKey: 'blockers', xFormat: { type: 'text' } },
          { name: 'Tasks', kind: 'array', xKey: 'tasks', xFormat: { type: 'links' }, relationTo: 'system:task-tracker/v1' },
        ],
        parts: [{ key: 'notes', name: 'Notes', uses: ['editor'], datasets: [{ module: 'editor' }] }],
      },
    ],
  },
]
